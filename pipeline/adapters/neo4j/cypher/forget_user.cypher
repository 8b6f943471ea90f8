// Forget a user ($user_id): statements run in order, each in chunks of its own transactions
// (CALL ... IN TRANSACTIONS), so a user of any size fits the transaction memory of a small heap;
// each returns n, what it changed. A fenced transaction moves the user's version on first
// (Neo4jGraph.forget_user), so no plan made before the forgetting can land after it. Run again
// after a crash half-way, it finishes the job. Parameters only. The audit trail stays as
// tombstones: ids, operation, time and source turn ids; no before/after, reason "forgotten".
// Earlier FORGET entries already hold no content and stay as they are.

// 1. Every FACT edge of the user.
MATCH ()-[r:FACT]->()
WHERE r.user_id = $user_id
CALL { WITH r DELETE r } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

// 2. The user's entities that no other user's fact references (entities are per user, so
//    in practice all of them).
MATCH (e:Entity {user_id: $user_id})
WHERE NOT EXISTS { (e)-[f:FACT]-() WHERE f.user_id <> $user_id }
CALL { WITH e DETACH DELETE e } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

// 3. The user's memories (with their HAS_MEMORY, SUPERSEDED_BY, DERIVED_FROM, ABOUT edges).
MATCH (m:Memory {user_id: $user_id})
CALL { WITH m DETACH DELETE m } IN TRANSACTIONS OF 2000 ROWS
RETURN count(*) AS n;

// 3b. The user's episodes (raw turns kept for BM25 recall).
MATCH (e:Episode {user_id: $user_id})
CALL { WITH e DETACH DELETE e } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

// 4. Audit entries become tombstones: only the listed properties are kept. Counted only when
//    they still held something.
MATCH (a:Audit {user_id: $user_id})
WHERE a.operation <> 'forget'
CALL {
  WITH a
  WITH a, (a.before IS NOT NULL OR a.after IS NOT NULL OR a.reason <> 'forgotten') AS changed
  SET a = a {.id, .user_id, .memory_id, .operation, .source_turn_ids, .batch_id, .extractor,
             .prompt_version, .at, .seq, reason: 'forgotten'}
  RETURN changed
} IN TRANSACTIONS OF 5000 ROWS
RETURN count(CASE WHEN changed THEN 1 END) AS n;

// 5. The FORGET entry ($tombstone: {id, props}); not counted.
MERGE (u:User {id: $user_id})
MERGE (a:Audit {id: $tombstone.id})
  ON CREATE SET a += $tombstone.props, a.at = datetime($tombstone.props.at)
MERGE (u)-[:AUDITED]->(a)
RETURN 0 AS n
