// The fence of every write to a user's state (plans, jobs, check's repairs, reembed, forget):
// included as the first clauses of its statement (`// include: fence`). SET takes the User
// node's write lock before the version is read (Neo4j reads committed data: reading first and
// writing later would let two transactions both see the same version). The version moves on
// only when it is the one the writer read its state at ($expected; null: any, for writers
// that do not plan from read state). Leaves u, was (the version found), ok (whether the
// write may go on) and version (the user's version now) for the clauses after it.
MERGE (u:User {id: $user_id})
SET u._lock = true
WITH u, coalesce(u.version, 0) AS was
WITH u, was, ($expected IS NULL OR was = $expected) AS ok
SET u.version = CASE WHEN ok THEN was + 1 ELSE was END
REMOVE u._lock
WITH u, was, ok, u.version AS version
