-- Drop the claim if it is still ours, whatever waits (the reaper claims the user again), and
-- wake whoever holds on for it.
-- KEYS: the claim; ARGV: token. 1: dropped, 0: not ours.
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call('publish', 'memq:released', KEYS[1])
  return 1
end
return 0
