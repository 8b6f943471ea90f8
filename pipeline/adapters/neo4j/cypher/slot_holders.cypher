// Every fact ever stated for these single-valued slots, open or closed: the slot's timeline.
UNWIND $slots AS slot
MATCH (s:Entity {user_id: $user_id, key: slot.subject_key})-[r:FACT]->(o:Entity)
WHERE r.predicate = slot.predicate AND r.user_id = $user_id
RETURN DISTINCT r.memory_id AS memory_id, s.name AS subject, r.predicate AS predicate,
       o.name AS object, r.valid_at AS valid_at
