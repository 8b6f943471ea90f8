// The turn before each of these (by event time, in the same session of the same user):
// what an answer replies to, for the context block. Times as ISO strings.
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.user_id = $user_id
CALL {
  WITH e
  MATCH (p:Episode)
  WHERE p.user_id = $user_id AND p.session_id = e.session_id AND p.event_at < e.event_at
  RETURN p ORDER BY p.event_at DESC LIMIT 1
}
RETURN e.id AS of, p.id AS id, p.text AS text, p.role AS role, p.speaker AS speaker,
       p.ref AS ref, toString(p.event_at) AS event_at, toString(p.created_at) AS created_at,
       0.0 AS score
