-- Let go of a user's claim when its mailbox is empty, atomically with the check, so nothing
-- posted meanwhile is stranded; wake whoever holds on for the user.
-- KEYS: the claim, the mailbox, the bucket's set of mailboxes; ARGV: token, user.
-- 1: released; 0: work is waiting, keep draining; -1: not the claimant.
if redis.call('get', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('zcard', KEYS[2]) > 0 then return 0 end
redis.call('del', KEYS[1])
redis.call('srem', KEYS[3], ARGV[2])
redis.call('publish', 'memq:released', KEYS[1])
return 1
