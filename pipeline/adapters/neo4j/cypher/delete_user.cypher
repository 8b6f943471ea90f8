// Delete everything of a user ($user_id): demo and test data (memq forget --purge); real
// forgetting is forget_user (tombstones stay). Statements run in order, each in bounded
// transactions of its own (CALL ... IN TRANSACTIONS), through the label indexes; each
// returns n, what it deleted: FACT edges first (an entity such as "user" can hold one per
// memory, and deleting it with them in one transaction exceeded the transaction memory at
// 100k memories), then nodes with their remaining edges.
MATCH (:Entity {user_id: $user_id})-[r:FACT]->()
CALL { WITH r DELETE r } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

MATCH (m:Memory {user_id: $user_id})
CALL { WITH m DETACH DELETE m } IN TRANSACTIONS OF 2000 ROWS
RETURN count(*) AS n;

MATCH (e:Entity {user_id: $user_id})
CALL { WITH e DETACH DELETE e } IN TRANSACTIONS OF 2000 ROWS
RETURN count(*) AS n;

MATCH (e:Episode {user_id: $user_id})
CALL { WITH e DETACH DELETE e } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

MATCH (a:Audit {user_id: $user_id})
CALL { WITH a DETACH DELETE a } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS n;

MATCH (u:User {id: $user_id})
DETACH DELETE u
RETURN count(*) AS n
