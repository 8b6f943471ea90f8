// The fence of a write: first statement of its transaction. SET takes the User node's write
// lock before the version is read (Neo4j reads committed data: reading first and writing
// later would let two transactions both see the same version). The version moves on only
// when it is the one the plan was made from ($expected; null: any, for writers that do not
// plan from read state). The caller rolls back when `was` is not $expected.
MERGE (u:User {id: $user_id})
SET u._lock = true
WITH u, coalesce(u.version, 0) AS was
SET u.version = CASE WHEN $expected IS NULL OR was = $expected THEN was + 1 ELSE was END
REMOVE u._lock
RETURN was, u.version AS version
