// Whose memory this id is (the Memory node's index on id; none: no row). For callers that
// hold store credentials only (memq.Memory.get(memory_id)): every other read names its user.
MATCH (m:Memory {id: $memory_id})
RETURN m.user_id AS user_id
LIMIT 1
