// What a plan needs from the graph before Chroma is asked anything, in one round trip:
// the user's version (the fence) and how far Chroma holds it, which of these batches were
// applied already, every fact ever stated for these single-valued slots (their timelines),
// the current memories with these texts (by content hash), and in full the memories of
// these ids and of the slot holders.
OPTIONAL MATCH (u:User {id: $user_id})
WITH coalesce(u.version, 0) AS version, coalesce(u.projected, 0) AS projected
CALL () {
  MATCH (a:Audit)
  WHERE a.user_id = $user_id AND a.batch_id IN $batch_ids
  RETURN collect(DISTINCT a.batch_id) AS applied
}
CALL () {
  UNWIND $slots AS slot
  MATCH (s:Entity {user_id: $user_id, key: slot.subject_key})-[r:FACT]->(o:Entity)
  WHERE r.predicate = slot.predicate AND r.user_id = $user_id
  WITH DISTINCT r.memory_id AS memory_id, s.name AS subject, r.predicate AS predicate,
       o.name AS object, r.valid_at AS valid_at
  RETURN collect({memory_id: memory_id, subject: subject, predicate: predicate,
                  object: object, valid_at: toString(valid_at)}) AS holders
}
// the current memories whose change ended a fact of these slots (a FACT edge that holds
// `ends`, what its memory replaced there): a late statement of an ended fact is history
CALL () {
  UNWIND $ends AS slot
  MATCH (s:Entity {user_id: $user_id, key: slot.subject_key})-[r:FACT]->(:Entity)
  WHERE r.predicate = slot.predicate AND r.user_id = $user_id AND r.ends IS NOT NULL
    AND r.expired_at IS NULL
  RETURN collect(DISTINCT r.memory_id) AS enders
}
// and the memories they closed: a second late statement of an ended fact is that history
CALL (enders) {
  UNWIND enders AS ender
  MATCH (c:Memory)-[:SUPERSEDED_BY]->(:Memory {id: ender})
  WHERE c.user_id = $user_id
  RETURN collect(DISTINCT c.id) AS ended
}
// by the (user_id, content_hash) index, one seek per hash: the planner took the (user_id,
// status) index, which reads every current memory of the user, on every plan
CALL () {
  MATCH (m:Memory)
  USING INDEX m:Memory(user_id, content_hash)
  WHERE m.user_id = $user_id AND m.content_hash IN $hashes AND m.status = 'current'
  RETURN collect(m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
                    created_at: toString(m.created_at), updated_at: toString(m.updated_at),
                    expires_at: toString(m.expires_at),
                    last_accessed_at: toString(m.last_accessed_at)}) AS exact
}
CALL (holders, enders, ended) {
  // one index lookup per id (an OR in a WHERE would scan the user's memories)
  UNWIND $ids + [h IN holders | h.memory_id] + enders + ended AS wanted
  WITH DISTINCT wanted
  MATCH (m:Memory {id: wanted})
  WHERE m.user_id = $user_id
  RETURN collect(m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
                    created_at: toString(m.created_at), updated_at: toString(m.updated_at),
                    expires_at: toString(m.expires_at),
                    last_accessed_at: toString(m.last_accessed_at)}) AS memories
}
RETURN version, projected, applied, holders, exact, memories, enders, ended
