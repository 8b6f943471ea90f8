// Forget one memory ($memory_id) of a user ($user_id): statements run in order, in one write
// transaction; each returns n, what it changed. Parameters only.

// 1. Entries written by the same decision as an entry about the memory (same batch, a shared
//    source turn; e.g. the supersede of the value it replaced, whose reason quotes it) lose
//    each field that quotes the memory's content or one of its facts' objects. Must run
//    before the memory and its facts are deleted.
OPTIONAL MATCH (m:Memory {id: $memory_id})
WHERE m.user_id = $user_id
OPTIONAL MATCH ()-[f:FACT {memory_id: $memory_id}]->(o:Entity)
WHERE f.user_id = $user_id
WITH m, collect(DISTINCT o.name) AS objects
WITH objects + [m.content] AS quoted
WITH [t IN quoted WHERE t IS NOT NULL AND t <> ''] AS texts
MATCH (own:Audit {user_id: $user_id, memory_id: $memory_id})
MATCH (a:Audit {user_id: $user_id, batch_id: own.batch_id})
WHERE a.memory_id <> $memory_id AND a.operation <> 'forget'
  AND any(t IN a.source_turn_ids WHERE t IN own.source_turn_ids)
WITH DISTINCT a, texts
WITH a, any(t IN texts WHERE coalesce(a.reason, '') CONTAINS t) AS in_reason,
        any(t IN texts WHERE coalesce(a.before, '') CONTAINS t) AS in_before,
        any(t IN texts WHERE coalesce(a.after, '') CONTAINS t) AS in_after
WHERE in_reason OR in_before OR in_after
SET a.reason = CASE WHEN in_reason THEN 'forgotten' ELSE a.reason END,
    a.before = CASE WHEN in_before THEN null ELSE a.before END,
    a.after = CASE WHEN in_after THEN null ELSE a.after END
RETURN count(a) AS n;

// 2. The entries about the memory become tombstones (only the listed properties are kept).
MATCH (a:Audit {user_id: $user_id, memory_id: $memory_id})
WHERE a.operation <> 'forget'
WITH a, (a.before IS NOT NULL OR a.after IS NOT NULL OR a.reason <> 'forgotten') AS changed
SET a = a {.id, .user_id, .memory_id, .operation, .source_turn_ids, .batch_id, .extractor,
           .prompt_version, .at, .seq, reason: 'forgotten'}
RETURN count(CASE WHEN changed THEN 1 END) AS n;

// 3. Its FACT edges.
MATCH ()-[r:FACT {memory_id: $memory_id}]->()
WHERE r.user_id = $user_id
DELETE r
RETURN count(r) AS n;

// 4. The user's entities that no FACT edge references any more.
MATCH (e:Entity {user_id: $user_id})
WHERE NOT EXISTS { (e)-[:FACT]-() }
DETACH DELETE e
RETURN count(e) AS n;

// 5. The memory.
MATCH (m:Memory {id: $memory_id})
WHERE m.user_id = $user_id
DETACH DELETE m
RETURN count(m) AS n;

// 6. The FORGET entry ($tombstone: {id, props}); not counted.
MERGE (u:User {id: $user_id})
MERGE (a:Audit {id: $tombstone.id})
  ON CREATE SET a += $tombstone.props, a.at = datetime($tombstone.props.at)
MERGE (u)-[:AUDITED]->(a)
RETURN 0 AS n
