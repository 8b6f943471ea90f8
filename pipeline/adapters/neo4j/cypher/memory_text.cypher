// BM25 over one user's memories, current and superseded (history: "where did she live
// before?"; superseded ones rank lower); $query already requires the user's key.
CALL db.index.fulltext.queryNodes('memq_memory_bm25', $query, {limit: $k})
YIELD node, score
WHERE node.user_id = $user_id AND node.status IN ['current', 'superseded']
RETURN node AS m, score
