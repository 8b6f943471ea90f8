// $facts: one row per triple; world time (valid_at/invalid_at) comes from the memory,
// system time (created_at/expired_at) from the plan's `now`.
UNWIND $facts AS f
MERGE (s:Entity {user_id: $user_id, key: f.subject_key})
  ON CREATE SET s.name = f.subject
MERGE (o:Entity {user_id: $user_id, key: f.object_key})
  ON CREATE SET o.name = f.object
MERGE (s)-[r:FACT {id: f.id}]->(o)
  ON CREATE SET r.created_at = $now
SET r.user_id = $user_id, r.predicate = f.predicate, r.memory_id = f.memory_id,
    r.valid_at = datetime(f.valid_at), r.invalid_at = datetime(f.invalid_at),
    r.source_turn_ids = f.source_turn_ids,
    r.expired_at = CASE WHEN f.current THEN null ELSE coalesce(r.expired_at, $now) END
