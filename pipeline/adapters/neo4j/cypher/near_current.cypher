// For each candidate's nearest memories (ids in order of similarity, as Chroma found them,
// of any status), the first $k that are current, in full: what dedupe and merge weigh.
UNWIND range(0, size($near) - 1) AS q
UNWIND range(0, size($near[q]) - 1) AS i
MATCH (m:Memory {id: $near[q][i]})
WHERE m.user_id = $user_id AND m.status = 'current'
WITH q, i, m ORDER BY q, i
WITH q, collect(m)[..$k] AS top
UNWIND top AS m
WITH DISTINCT m
// one row holding them all: the Python driver spends ~45 us on each row it receives, and a
// list inside one row is decoded natively; times as ISO strings (see get_memories.cypher)
RETURN collect(m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
                  created_at: toString(m.created_at), updated_at: toString(m.updated_at),
                  expires_at: toString(m.expires_at),
                  last_accessed_at: toString(m.last_accessed_at)}) AS memories
