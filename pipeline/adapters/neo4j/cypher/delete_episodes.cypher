// The episodes of these turns ($ids), of this user only.
MATCH (e:Episode {user_id: $user_id})
WHERE e.id IN $ids
DETACH DELETE e
RETURN count(*) AS n
