// What search reads from the graph, in one round trip: BM25 over the user's memories
// (current and superseded) and over their raw turns ($memory_query / $episode_query already
// require the user's key), and the turns that said what is no longer true (sources of the
// user's superseded memories). Times as epoch milliseconds (cheap for the driver to decode).
CALL {
  CALL db.index.fulltext.queryNodes('memq_memory_bm25', $memory_query, {limit: $k})
  YIELD node, score
  WHERE node.user_id = $user_id AND node.status IN ['current', 'superseded']
  RETURN collect({score: score, m: node {
    .id, .user_id, .content, .kind, .confidence, .importance, .source_turn_ids, .status,
    .embedding_model, .scope, .session_id,
    valid_at: node.valid_at.epochMillis, invalid_at: node.invalid_at.epochMillis,
    created_at: node.created_at.epochMillis, updated_at: node.updated_at.epochMillis,
    expires_at: node.expires_at.epochMillis,
    last_accessed_at: node.last_accessed_at.epochMillis}}) AS memories
}
CALL {
  CALL db.index.fulltext.queryNodes('memq_episode_bm25', $episode_query, {limit: $k})
  YIELD node, score
  WHERE node.user_id = $user_id
  RETURN collect({id: node.id, text: node.text, role: node.role, speaker: node.speaker,
                  ref: node.ref, event_at: node.event_at.epochMillis,
                  created_at: node.created_at.epochMillis, score: score}) AS episodes
}
CALL {
  MATCH (m:Memory {user_id: $user_id, status: 'superseded'})
  UNWIND m.source_turn_ids AS ref
  RETURN collect(DISTINCT ref) AS superseded
}
RETURN memories, episodes, superseded
