// The user's turns of role user that no consolidation has marked (consolidated_into), with
// their words: consolidation's candidates; their vectors are Chroma's. Times as ISO strings.
MATCH (e:Episode {user_id: $user_id})
WHERE e.role = 'user' AND e.consolidated_into IS NULL
RETURN e.id AS id, e.text AS text, e.role AS role, e.speaker AS speaker, e.ref AS ref,
       toString(e.event_at) AS event_at, toString(e.created_at) AS created_at, 0.0 AS score
ORDER BY e.event_at, e.ref
