// These turns of the user ($ids: their episode ids), as stored: the console's source turns.
// Times as ISO strings.
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.user_id = $user_id
RETURN e.id AS id, e.text AS text, e.role AS role, e.speaker AS speaker, e.ref AS ref,
       toString(e.event_at) AS event_at, toString(e.created_at) AS created_at, 0.0 AS score
ORDER BY e.event_at, e.ref
