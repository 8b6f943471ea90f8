MATCH (s:Entity)-[r:FACT]->(o:Entity)
WHERE r.user_id = $user_id
RETURN s.name AS subject, r.predicate AS predicate, o.name AS object, r.memory_id AS memory_id,
       r.valid_at AS valid_at, r.invalid_at AS invalid_at, r.created_at AS created_at,
       r.expired_at AS expired_at, r.source_turn_ids AS source_turn_ids
ORDER BY r.valid_at, r.id
