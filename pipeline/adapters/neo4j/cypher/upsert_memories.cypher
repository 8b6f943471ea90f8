// $memories: [{id, props, times}] — the full state of each memory the plan touches, its times
// as ISO strings (store.py's _iso); $version: the user's version this write made (Chroma
// catches up on memories newer than it has).
MERGE (u:User {id: $user_id})
WITH u
UNWIND $memories AS m
MERGE (n:Memory {id: m.id})
SET n += m.props, n.version = $version,
    n.valid_at = datetime(m.times.valid_at), n.invalid_at = datetime(m.times.invalid_at),
    n.created_at = datetime(m.times.created_at), n.updated_at = datetime(m.times.updated_at),
    n.expires_at = datetime(m.times.expires_at),
    n.last_accessed_at = datetime(m.times.last_accessed_at)
MERGE (u)-[:HAS_MEMORY]->(n)
WITH n, m
OPTIONAL MATCH (newer:Memory {id: m.props.superseded_by})
FOREACH (_ IN CASE WHEN newer IS NULL THEN [] ELSE [1] END | MERGE (n)-[:SUPERSEDED_BY]->(newer))
WITH n, m
UNWIND m.props.derived_from AS source_id
MATCH (source:Memory {id: source_id})
MERGE (n)-[:DERIVED_FROM]->(source)
