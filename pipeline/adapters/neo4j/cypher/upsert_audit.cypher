UNWIND $entries AS e
MERGE (a:Audit {id: e.id})
  ON CREATE SET a += e.props, a.at = datetime(e.props.at)
WITH a, e
MATCH (u:User {id: $user_id})
MERGE (u)-[:AUDITED]->(a)
WITH a, e
OPTIONAL MATCH (m:Memory {id: e.props.memory_id})
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | MERGE (a)-[:ABOUT]->(m))
