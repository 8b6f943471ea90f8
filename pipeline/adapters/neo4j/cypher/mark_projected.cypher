// Chroma holds every write up to $version. Never moves back.
MATCH (u:User {id: $user_id})
SET u.projected = CASE WHEN coalesce(u.projected, 0) < $version THEN $version
                       ELSE u.projected END
