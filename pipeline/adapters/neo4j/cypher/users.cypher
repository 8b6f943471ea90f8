MATCH (u:User)
RETURN u.id AS user_id
ORDER BY user_id
