-- A token bucket on Redis's clock (workers.auth: a tenant's request rate and ingest volume).
-- KEYS: the bucket; ARGV: rate per second, burst, cost.
-- The seconds to wait before the cost fits (0: taken now), as a string.
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local b = redis.call('hmget', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= cost then tokens = tokens - cost else wait = (cost - tokens) / rate end
redis.call('hset', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('pexpire', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
