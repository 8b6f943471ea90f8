// Chroma holds every write up to $version. Never moves back. With $if_at: only while the
// user is still at that version (no commit came in since Chroma was written). Returns the
// user's version now.
MATCH (u:User {id: $user_id})
SET u.projected = CASE WHEN ($if_at IS NULL OR u.version = $if_at)
                            AND coalesce(u.projected, 0) < $version THEN $version
                       ELSE u.projected END
RETURN u.version AS version
