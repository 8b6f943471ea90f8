// Current memories of the user with one of these normalised-text hashes: by the (user_id,
// content_hash) index, one seek per hash (the planner took the (user_id, status) index, which
// reads every current memory of the user).
MATCH (m:Memory)
USING INDEX m:Memory(user_id, content_hash)
WHERE m.user_id = $user_id AND m.content_hash IN $hashes AND m.status = 'current'
// times as ISO strings: Python parses them ~20x faster than the driver hydrates
// temporal values, to the same microsecond
RETURN m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
            created_at: toString(m.created_at), updated_at: toString(m.updated_at),
            expires_at: toString(m.expires_at),
            last_accessed_at: toString(m.last_accessed_at)} AS m
