// Every node of a user ($user_id), for a copy into another instance (Neo4jGraph.copy_user):
// its element id (the copy's key for edges), labels and properties, through each label's index.
MATCH (n:User {id: $user_id})
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
UNION ALL
MATCH (n:Memory {user_id: $user_id})
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
UNION ALL
MATCH (n:Entity {user_id: $user_id})
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
UNION ALL
MATCH (n:Episode {user_id: $user_id})
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
UNION ALL
MATCH (n:Audit {user_id: $user_id})
RETURN elementId(n) AS key, labels(n) AS labels, properties(n) AS props
