// (included) The user's superseded memories as {id, refs, next}, the current memories that
// one of them names as its successor (status 'current' is the chain's end), and the refs of
// those turns that a current memory cites too (the turn said more than what changed).
CALL {
  MATCH (m:Memory {user_id: $user_id, status: 'superseded'})
  RETURN collect({id: m.id, refs: m.source_turn_ids, next: m.superseded_by}) AS superseded,
         collect(DISTINCT m.superseded_by) AS nexts
}
CALL (superseded) {
  UNWIND superseded AS s
  UNWIND s.refs AS ref
  WITH collect(DISTINCT ref) AS refs
  MATCH (c:Memory {user_id: $user_id, status: 'current'})
  UNWIND c.source_turn_ids AS cited
  WITH cited, refs WHERE cited IN refs
  RETURN collect(DISTINCT cited) AS mixed
}
CALL (nexts) {
  MATCH (c:Memory {user_id: $user_id, status: 'current'}) WHERE c.id IN nexts
  RETURN collect(c {
    .id, .user_id, .content, .kind, .confidence, .importance, .source_turn_ids, .status,
    .embedding_model, .scope, .session_id, derived_from: coalesce(c.derived_from, []),
    valid_at: toString(c.valid_at), invalid_at: toString(c.invalid_at),
    created_at: toString(c.created_at), updated_at: toString(c.updated_at),
    expires_at: toString(c.expires_at),
    last_accessed_at: toString(c.last_accessed_at)}) AS successors
}
