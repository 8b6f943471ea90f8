// BM25 over one user's current memories: $query already requires the user's key.
CALL db.index.fulltext.queryNodes('memq_memory_text', $query, {limit: $k})
YIELD node, score
WHERE node.user_id = $user_id AND node.status = 'current'
RETURN node AS m, score
