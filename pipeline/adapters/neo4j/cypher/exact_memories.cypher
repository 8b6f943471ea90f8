// Current memories of the user with one of these normalised-text hashes.
MATCH (m:Memory)
WHERE m.user_id = $user_id AND m.content_hash IN $hashes AND m.status = 'current'
RETURN m {.*} AS m
