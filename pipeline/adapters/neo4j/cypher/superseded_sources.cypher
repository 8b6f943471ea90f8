// The turns that said what is no longer true: sources of the user's superseded memories,
// as one list (one row: a row per ref costs ~0.05 ms each to stream and decode).
MATCH (m:Memory {user_id: $user_id, status: 'superseded'})
UNWIND m.source_turn_ids AS ref
RETURN collect(DISTINCT ref) AS refs
