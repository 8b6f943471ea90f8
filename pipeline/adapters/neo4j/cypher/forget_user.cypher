// Forget a user ($user_id): statements run in order, in one write transaction; each returns
// n, what it changed. Parameters only. The audit trail stays as tombstones: ids, operation,
// time and source turn ids; no before/after, reason "forgotten". Earlier FORGET entries
// already hold no content and stay as they are.

// 1. Every FACT edge of the user.
MATCH ()-[r:FACT]->()
WHERE r.user_id = $user_id
DELETE r
RETURN count(r) AS n;

// 2. The user's entities that no other user's fact references (entities are per user, so
//    in practice all of them).
MATCH (e:Entity {user_id: $user_id})
WHERE NOT EXISTS { (e)-[f:FACT]-() WHERE f.user_id <> $user_id }
DETACH DELETE e
RETURN count(e) AS n;

// 3. The user's memories (with their HAS_MEMORY, SUPERSEDED_BY, DERIVED_FROM, ABOUT edges).
MATCH (m:Memory {user_id: $user_id})
DETACH DELETE m
RETURN count(m) AS n;

// 4. Audit entries become tombstones: only the listed properties are kept. Counted only when
//    they still held something.
MATCH (a:Audit {user_id: $user_id})
WHERE a.operation <> 'forget'
WITH a, (a.before IS NOT NULL OR a.after IS NOT NULL OR a.reason <> 'forgotten') AS changed
SET a = a {.id, .user_id, .memory_id, .operation, .source_turn_ids, .batch_id, .extractor,
           .prompt_version, .at, .seq, reason: 'forgotten'}
RETURN count(CASE WHEN changed THEN 1 END) AS n;

// 5. The FORGET entry ($tombstone: {id, props}); not counted.
MERGE (u:User {id: $user_id})
MERGE (a:Audit {id: $tombstone.id})
  ON CREATE SET a += $tombstone.props
MERGE (u)-[:AUDITED]->(a)
RETURN 0 AS n
