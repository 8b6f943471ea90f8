// Every Memory node of one user ($user_id; null: of every user), with its FACT edges split
// into open (neither expired nor invalid) and closed ones, and its properties (to parse as a
// memory: a damaged node may not): what `memq check` compares.
MATCH (m:Memory)
WHERE $user_id IS NULL OR m.user_id = $user_id
OPTIONAL MATCH ()-[r:FACT {memory_id: m.id}]->()
WHERE r.user_id = m.user_id
WITH m, collect(r) AS facts
RETURN m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
          created_at: toString(m.created_at), updated_at: toString(m.updated_at),
          expires_at: toString(m.expires_at),
          last_accessed_at: toString(m.last_accessed_at)} AS props,
       m.id AS id, m.user_id AS user_id, m.status AS status, m.content AS content,
       m.valid_at AS valid_at, m.invalid_at AS invalid_at, m.updated_at AS updated_at,
       [f IN facts WHERE f.expired_at IS NULL AND f.invalid_at IS NULL | f.id] AS open_facts,
       [f IN facts WHERE f.expired_at IS NOT NULL OR f.invalid_at IS NOT NULL | f.id]
         AS closed_facts
ORDER BY m.user_id, m.id
