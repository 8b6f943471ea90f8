// Every turn reference of one user that starts with $prefix.
MATCH (e:Episode)
WHERE e.user_id = $user_id AND e.ref STARTS WITH $prefix
RETURN e.ref AS ref
