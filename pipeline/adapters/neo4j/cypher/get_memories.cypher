MATCH (m:Memory)
WHERE m.user_id = $user_id AND m.id IN $ids
RETURN m {.*} AS m
