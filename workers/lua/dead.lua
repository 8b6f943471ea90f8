-- Record a delivery as dead with its reason and drop what it left, in one step (the caller
-- counts it in the metrics and wakes whoever waits for the delivery).
-- KEYS: the bucket's dead letters, outcome, delivery, extracted, the bucket's outbox and
--       in-flight set, the user's mailbox (the outbox again when no user is known)
-- ARGV: entry, cap, delivery id, ttl, "1" when the 7th key is a mailbox
-- 0: the delivery was done already (a stale duplicate failed after another run finished it:
-- nothing to record), 1: dead-lettered.
local outcome = redis.call('get', KEYS[2])
if outcome and string.sub(outcome, 1, 4) == 'done' and redis.call('exists', KEYS[3]) == 0 then
  return 0
end
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('ltrim', KEYS[1], -tonumber(ARGV[2]), -1)
if ARGV[5] == '1' then redis.call('zrem', KEYS[7], ARGV[3]) end
redis.call('zrem', KEYS[5], ARGV[3])
redis.call('del', KEYS[3], KEYS[4])
redis.call('srem', KEYS[6], ARGV[3])
redis.call('set', KEYS[2], 'dead_lettered', 'EX', tonumber(ARGV[4]))
return 1
