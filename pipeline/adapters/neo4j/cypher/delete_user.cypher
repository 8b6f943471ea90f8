MATCH (n)
WHERE (n:Memory OR n:Audit OR n:Entity OR n:User OR n:Episode) AND coalesce(n.user_id, n.id) = $user_id
DETACH DELETE n
RETURN count(n) AS deleted
