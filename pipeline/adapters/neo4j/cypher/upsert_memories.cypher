// $memories: [{id, props}] — the full state of each memory the plan touches; $version: the
// user's version this write made (Chroma catches up on memories newer than it has).
MERGE (u:User {id: $user_id})
WITH u
UNWIND $memories AS m
MERGE (n:Memory {id: m.id})
SET n += m.props, n.version = $version
MERGE (u)-[:HAS_MEMORY]->(n)
WITH n, m
OPTIONAL MATCH (newer:Memory {id: m.props.superseded_by})
FOREACH (_ IN CASE WHEN newer IS NULL THEN [] ELSE [1] END | MERGE (n)-[:SUPERSEDED_BY]->(newer))
WITH n, m
UNWIND m.props.derived_from AS source_id
MATCH (source:Memory {id: source_id})
MERGE (n)-[:DERIVED_FROM]->(source)
