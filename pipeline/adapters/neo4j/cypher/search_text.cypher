// What search reads from the graph, in one round trip: BM25 over the user's memories
// (current and superseded) and over their raw turns ($memory_query / $episode_query already
// require the user's key), and what is no longer true: the user's superseded memories (their
// source turns, their successor) and the current memories their chains may end in (the
// chains are followed in Python: store.changed). Times as ISO strings (cheap to decode).
CALL {
  CALL db.index.fulltext.queryNodes('memq_memory_bm25', $memory_query, {limit: $k})
  YIELD node, score
  WHERE node.user_id = $user_id AND node.status IN ['current', 'superseded']
  RETURN collect({score: score, m: node {
    .id, .user_id, .content, .kind, .confidence, .importance, .source_turn_ids, .status,
    .embedding_model, .scope, .session_id, derived_from: coalesce(node.derived_from, []),
    valid_at: toString(node.valid_at), invalid_at: toString(node.invalid_at),
    created_at: toString(node.created_at), updated_at: toString(node.updated_at),
    expires_at: toString(node.expires_at),
    last_accessed_at: toString(node.last_accessed_at)}}) AS memories
}
CALL {
  CALL db.index.fulltext.queryNodes('memq_episode_bm25_v2', $episode_query, {limit: $k})
  YIELD node, score
  WHERE node.user_id = $user_id
  RETURN collect({id: node.id, text: node.text, role: node.role, speaker: node.speaker,
                  neighbors: node.neighbors,
                  ref: node.ref, event_at: toString(node.event_at),
                  created_at: toString(node.created_at), score: score}) AS episodes
}
// include: changed
RETURN memories, episodes, superseded, successors, mixed
