// BM25 over one user's memories, current and superseded (history: "where did she live
// before?"; superseded ones rank lower); $query already requires the user's key. Only what
// ranking and a hit need, times as epoch milliseconds (a whole node, temporal values and
// all, costs the driver twice as much to decode).
CALL db.index.fulltext.queryNodes('memq_memory_bm25', $query, {limit: $k})
YIELD node, score
WHERE node.user_id = $user_id AND node.status IN ['current', 'superseded']
RETURN node {.id, .user_id, .content, .kind, .confidence, .importance, .source_turn_ids,
             .status, .embedding_model, .scope, .session_id,
             valid_at: node.valid_at.epochMillis, invalid_at: node.invalid_at.epochMillis,
             created_at: node.created_at.epochMillis, updated_at: node.updated_at.epochMillis,
             expires_at: node.expires_at.epochMillis,
             last_accessed_at: node.last_accessed_at.epochMillis} AS m, score
