// Memories written after version $since (what Chroma may not have yet), and since then deleted
// ones cannot be listed: forget deletes from Chroma first.
MATCH (m:Memory)
WHERE m.user_id = $user_id AND m.version > $since
RETURN m {.*} AS m
