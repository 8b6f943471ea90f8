// Of these memory ids, the user's current ones: ids only, as one list (a full map costs
// ~1 ms a record; a row per id ~0.1 ms).
MATCH (m:Memory)
WHERE m.user_id = $user_id AND m.id IN $ids AND m.status = 'current'
RETURN collect(m.id) AS ids
