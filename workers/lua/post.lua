-- Post an extracted delivery to its user's mailbox and claim the user if nobody has.
-- KEYS: extracted, mailbox, mailboxes, outbox, delivery, claim
-- ARGV: extracted json, ttl s, score, delivery id, user, new token, lease ms
-- The new token when this post claimed the user, else nil (the claimant drains it).
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[4])
redis.call('sadd', KEYS[3], ARGV[5])
redis.call('zrem', KEYS[4], ARGV[4])
redis.call('hset', KEYS[5], 'state', 'extracted')
if redis.call('set', KEYS[6], ARGV[6], 'NX', 'PX', ARGV[7]) then return ARGV[6] end
return false
