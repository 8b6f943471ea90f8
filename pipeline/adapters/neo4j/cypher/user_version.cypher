// The user's version (every fenced write adds one) and how far Chroma has been brought up to it.
OPTIONAL MATCH (u:User {id: $user_id})
RETURN coalesce(u.version, 0) AS version, coalesce(u.projected, 0) AS projected
