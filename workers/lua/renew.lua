-- Renew the claim on a user while it is still ours.
-- KEYS: the claim; ARGV: token, lease ms. 1: renewed, 0: not ours (any more).
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
