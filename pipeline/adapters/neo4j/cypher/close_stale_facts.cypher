// Facts of a memory that its new state no longer states are closed, never deleted.
UNWIND $memories AS m
MATCH ()-[r:FACT {memory_id: m.id}]->()
WHERE r.user_id = $user_id AND NOT r.id IN m.triple_ids AND r.expired_at IS NULL
SET r.expired_at = $now, r.invalid_at = coalesce(r.invalid_at, datetime(m.times.updated_at))
