// Every edge leaving a node of a user ($user_id): its ends' element ids, type and properties.
MATCH (a:User {id: $user_id})-[r]->(b)
RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b
UNION ALL
MATCH (a:Memory {user_id: $user_id})-[r]->(b)
RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b
UNION ALL
MATCH (a:Entity {user_id: $user_id})-[r]->(b)
RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b
UNION ALL
MATCH (a:Episode {user_id: $user_id})-[r]->(b)
RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b
UNION ALL
MATCH (a:Audit {user_id: $user_id})-[r]->(b)
RETURN elementId(a) AS a, type(r) AS type, properties(r) AS props, elementId(b) AS b
