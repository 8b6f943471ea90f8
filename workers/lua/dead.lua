-- Record a delivery as dead with its reason and drop what it left, in one step; wake whoever
-- waits for the delivery.
-- KEYS: dead letters, outcome, delivery, extracted, outbox, inflight, metrics, mailbox (or "")
-- ARGV: entry, cap, delivery id, ttl, metrics field
-- 0: the delivery was done already (a stale duplicate failed after another run finished it:
-- nothing to record), 1: dead-lettered.
local outcome = redis.call('get', KEYS[2])
if outcome and string.sub(outcome, 1, 4) == 'done' and redis.call('exists', KEYS[3]) == 0 then
  return 0
end
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('ltrim', KEYS[1], -tonumber(ARGV[2]), -1)
if KEYS[8] ~= '' then redis.call('zrem', KEYS[8], ARGV[3]) end
redis.call('zrem', KEYS[5], ARGV[3])
redis.call('del', KEYS[3], KEYS[4])
redis.call('srem', KEYS[6], ARGV[3])
redis.call('set', KEYS[2], 'dead_lettered', 'EX', tonumber(ARGV[4]))
redis.call('hincrby', KEYS[7], ARGV[5], 1)
redis.call('publish', 'memq:finished', ARGV[3])
return 1
