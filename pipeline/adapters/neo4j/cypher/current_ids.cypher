// Of these memory ids, the user's current ones: ids only (a full map costs ~1 ms a record).
MATCH (m:Memory)
WHERE m.user_id = $user_id AND m.id IN $ids AND m.status = 'current'
RETURN m.id AS id
