// A user's audit trail, in order: of one memory ($memory_id), of some batches ($batch_ids),
// or all of it (both null).
MATCH (a:Audit)
WHERE a.user_id = $user_id AND ($memory_id IS NULL OR a.memory_id = $memory_id)
  AND ($batch_ids IS NULL OR a.batch_id IN $batch_ids)
RETURN a {.*} AS entry
ORDER BY a.at, a.seq, a.id
