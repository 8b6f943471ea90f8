// The user's memories as the state of record holds them, for agent reads and lifecycle jobs:
// current ones ($all false), every one ($all true), or those true at world time $as_of as
// known now (not archived, valid at $as_of, not yet invalid then); never those of $exclude.
MATCH (m:Memory {user_id: $user_id})
WHERE NOT m.id IN $exclude AND CASE
        WHEN $as_of IS NOT NULL THEN m.status <> 'archived'
             AND m.valid_at <= datetime($as_of)
             AND (m.invalid_at IS NULL OR m.invalid_at > datetime($as_of))
        WHEN $all THEN true
        ELSE m.status = 'current'
      END
WITH m ORDER BY m.valid_at, m.id
// times as ISO strings: Python parses them ~20x faster than the driver hydrates
// temporal values, to the same microsecond
RETURN m {.*, valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at),
            created_at: toString(m.created_at), updated_at: toString(m.updated_at),
            expires_at: toString(m.expires_at),
            last_accessed_at: toString(m.last_accessed_at)} AS m
