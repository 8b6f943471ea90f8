-- Post an extracted delivery to its user's mailbox and claim the user if nobody has; unless
-- the user was forgotten since the delivery was enqueued, or the delivery is no longer there
-- (finished by another run of it, or by forget), or the user's data moved to another store
-- shard since the extraction placed it (or is moving now): then nothing is written.
-- KEYS: extracted, mailbox, the bucket's mailboxes and outbox, delivery, claim, forgotten,
--       shard entry (all in the user's bucket: one Redis Cluster slot)
-- ARGV: extracted json, ttl s, score, delivery id, user, new token, lease ms, enqueued at,
--       the shard epoch the extraction wrote under ('' unsharded: not checked)
-- The new token when this post claimed the user, 1 when it posted for the claimant to
-- drain, -1 when the user was forgotten, 0 when the delivery is gone, -2 when it moved.
local forgotten = redis.call('get', KEYS[7])
if forgotten and tonumber(ARGV[8]) <= tonumber(forgotten) then return -1 end
if ARGV[9] ~= '' and (redis.call('hexists', KEYS[8], 'moving') == 1
    or (redis.call('hget', KEYS[8], 'epoch') or '0') ~= ARGV[9]) then return -2 end
if redis.call('hexists', KEYS[5], 'batch') == 0 then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[4])
redis.call('sadd', KEYS[3], ARGV[5])
redis.call('zrem', KEYS[4], ARGV[4])
redis.call('hset', KEYS[5], 'state', 'extracted')
if redis.call('set', KEYS[6], ARGV[6], 'NX', 'PX', ARGV[7]) then return ARGV[6] end
return 1
