// A user's nodes and edges as export_nodes / export_edges read them, written into this
// instance in one transaction (Neo4jGraph.copy_user): $nodes [{label, props}] in order,
// $edges [{a, b: indexes into $nodes, type, props}]. One branch per label and per edge type
// of memq's graph (the caller refuses any other): Neo4j 5.26 planned a dynamic edge type
// ($(e.type)) once per cached plan, not per row.
UNWIND range(0, size($nodes) - 1) AS i
WITH i, $nodes[i] AS n
CALL (n) {
  WITH n WHERE n.label = 'User' CREATE (x:User) SET x = n.props RETURN x
  UNION ALL
  WITH n WHERE n.label = 'Memory' CREATE (x:Memory) SET x = n.props RETURN x
  UNION ALL
  WITH n WHERE n.label = 'Entity' CREATE (x:Entity) SET x = n.props RETURN x
  UNION ALL
  WITH n WHERE n.label = 'Episode' CREATE (x:Episode) SET x = n.props RETURN x
  UNION ALL
  WITH n WHERE n.label = 'Audit' CREATE (x:Audit) SET x = n.props RETURN x
}
WITH i, x ORDER BY i
WITH collect(x) AS made
UNWIND (CASE WHEN size($edges) = 0 THEN [null] ELSE $edges END) AS e
WITH made, e WHERE e IS NOT NULL
WITH made[e.a] AS a, made[e.b] AS b, e
CALL (a, b, e) {
  WITH a, b, e WHERE e.type = 'FACT' CREATE (a)-[r:FACT]->(b) SET r = e.props RETURN r
  UNION ALL
  WITH a, b, e WHERE e.type = 'HAS_MEMORY' CREATE (a)-[r:HAS_MEMORY]->(b) SET r = e.props
  RETURN r
  UNION ALL
  WITH a, b, e WHERE e.type = 'ABOUT' CREATE (a)-[r:ABOUT]->(b) SET r = e.props RETURN r
  UNION ALL
  WITH a, b, e WHERE e.type = 'AUDITED' CREATE (a)-[r:AUDITED]->(b) SET r = e.props RETURN r
  UNION ALL
  WITH a, b, e WHERE e.type = 'SUPERSEDED_BY' CREATE (a)-[r:SUPERSEDED_BY]->(b)
  SET r = e.props RETURN r
  UNION ALL
  WITH a, b, e WHERE e.type = 'DERIVED_FROM' CREATE (a)-[r:DERIVED_FROM]->(b)
  SET r = e.props RETURN r
}
RETURN count(r) AS n
