// What is no longer true, alone (a query of no words: no BM25): see search_text.cypher.
// include: changed
RETURN superseded, successors, mixed
