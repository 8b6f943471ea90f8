MATCH (a:Audit)
WHERE a.user_id = $user_id AND ($memory_id IS NULL OR a.memory_id = $memory_id)
RETURN a {.*} AS entry
ORDER BY a.at, a.seq, a.id
