// A recall: importance and last access only, so it cannot undo a concurrent change.
UNWIND $memories AS m
MATCH (n:Memory {id: m.id})
WHERE n.user_id = $user_id
SET n.importance = m.importance, n.last_accessed_at = m.last_accessed_at
