// Which of these batches a committed plan already applied (their audit entries exist).
MATCH (a:Audit)
WHERE a.user_id = $user_id AND a.batch_id IN $batch_ids
RETURN DISTINCT a.batch_id AS batch_id
