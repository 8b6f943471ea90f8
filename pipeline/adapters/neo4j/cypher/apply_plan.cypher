// A plan's write, fenced, as one statement: one auto-commit transaction, one round trip
// (as five statements in a managed transaction it took seven: BEGIN, five RUNs, COMMIT).
//
// The fence (fence.cypher): the plan is written only when the user is still at the version
// the plan was made from ($expected; null: any). One row: `was`, and `version` (null when the
// fence refused: nothing was written); no row when the plan was made at a version the user
// no longer has a node for (forgotten since): no node is made for it.
OPTIONAL MATCH (known:User {id: $user_id})
WITH known WHERE known IS NOT NULL OR coalesce($expected, 0) = 0
// include: fence
CALL (u, ok, version) {
  WITH * WHERE ok
  // $memories: [{id, props, times, triple_ids}]: the full state of each memory the plan
  // touches, its times as ISO strings (store.py's _iso); `version` marks it (Chroma catches
  // up on memories newer than it has).
  CALL (u, version) {
    UNWIND $memories AS m
    MERGE (n:Memory {id: m.id})
    SET n += m.props, n.version = version,
        n.valid_at = datetime(m.times.valid_at), n.invalid_at = datetime(m.times.invalid_at),
        n.created_at = datetime(m.times.created_at),
        n.updated_at = datetime(m.times.updated_at),
        n.expires_at = datetime(m.times.expires_at),
        n.last_accessed_at = datetime(m.times.last_accessed_at)
    MERGE (u)-[:HAS_MEMORY]->(n)
    WITH n, m
    OPTIONAL MATCH (newer:Memory {id: m.props.superseded_by})
    FOREACH (_ IN CASE WHEN newer IS NULL THEN [] ELSE [1] END |
      MERGE (n)-[:SUPERSEDED_BY]->(newer))
    WITH n, m
    UNWIND m.props.derived_from AS source_id
    MATCH (source:Memory {id: source_id})
    MERGE (n)-[:DERIVED_FROM]->(source)
  }
  // Facts of a memory that its new state no longer states are closed, never deleted.
  CALL () {
    UNWIND $memories AS m
    MATCH ()-[r:FACT {memory_id: m.id}]->()
    WHERE r.user_id = $user_id AND NOT r.id IN m.triple_ids AND r.expired_at IS NULL
    SET r.expired_at = $now, r.invalid_at = coalesce(r.invalid_at, datetime(m.times.updated_at))
  }
  // $facts: one row per triple; world time (valid_at/invalid_at) comes from the memory,
  // system time (created_at/expired_at) from the plan's `now`.
  CALL () {
    UNWIND $facts AS f
    MERGE (s:Entity {user_id: $user_id, key: f.subject_key})
      ON CREATE SET s.name = f.subject
    MERGE (o:Entity {user_id: $user_id, key: f.object_key})
      ON CREATE SET o.name = f.object
    MERGE (s)-[r:FACT {id: f.id}]->(o)
      ON CREATE SET r.created_at = $now
    SET r.user_id = $user_id, r.predicate = f.predicate, r.memory_id = f.memory_id,
        r.valid_at = datetime(f.valid_at), r.invalid_at = datetime(f.invalid_at),
        r.source_turn_ids = f.source_turn_ids, r.ends = f.ends,
        r.expired_at = CASE WHEN f.current THEN null ELSE coalesce(r.expired_at, $now) END
  }
  CALL () {
    // include: upsert_audit
  }
}
RETURN was, CASE WHEN ok THEN version END AS version
