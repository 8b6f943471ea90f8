// The newest turn of one user whose reference starts with $prefix (a LangGraph key's turns:
// memq.workers.langgraph), with its text and the producer's metadata; none: no row.
MATCH (e:Episode)
WHERE e.user_id = $user_id AND e.ref STARTS WITH $prefix
RETURN e.ref AS ref, e.text AS text, e.metadata_json AS metadata,
       toString(e.created_at) AS created_at, toString(e.event_at) AS event_at
ORDER BY e.event_at DESC, e.ref DESC
LIMIT 1
