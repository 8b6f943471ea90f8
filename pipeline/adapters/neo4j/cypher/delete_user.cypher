// Delete everything of a user ($user_id): demo and test data (memq forget --purge); real
// forgetting is forget_user (tombstones stay). Statements run in order, each in bounded
// transactions of its own (CALL ... IN TRANSACTIONS), through the label indexes; each
// returns n, the nodes it deleted (with their edges).
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
