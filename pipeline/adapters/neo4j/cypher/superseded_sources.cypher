// The turns that said what is no longer true: sources of the user's superseded memories.
MATCH (m:Memory {user_id: $user_id, status: 'superseded'})
UNWIND m.source_turn_ids AS ref
RETURN DISTINCT ref
