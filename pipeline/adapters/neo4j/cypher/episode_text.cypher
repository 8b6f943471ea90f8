// BM25 over one user's raw turns: $query already requires the user's key (Neo4jGraph).
// Times as ISO strings (cheaper for the driver than temporal values).
CALL db.index.fulltext.queryNodes('memq_episode_bm25_v2', $query, {limit: $k})
YIELD node, score
WHERE node.user_id = $user_id
RETURN node.id AS id, node.text AS text, node.role AS role, node.speaker AS speaker,
       node.neighbors AS neighbors,
       node.ref AS ref, toString(node.event_at) AS event_at,
       toString(node.created_at) AS created_at, score
