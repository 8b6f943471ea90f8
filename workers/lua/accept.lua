-- Accept deliveries and publish their messages: the records first, so a message is never read
-- before its delivery is recorded. One command, not a pipeline of 3n + m: an agent's
-- Client.add packs and parses one request and one reply.
-- KEYS: outbox, inflight, each delivery's record, each message's queue
-- ARGV: enqueued_at, deadline, n, then per delivery: id, user, batch, trace ("": none);
--       then the m messages
local n = tonumber(ARGV[3])
for i = 1, n do
  local at = 4 * i
  local id = ARGV[at]
  redis.call('hset', KEYS[2 + i], 'user', ARGV[at + 1], 'batch', ARGV[at + 2],
             'enqueued_at', ARGV[1], 'state', 'queued')
  if ARGV[at + 3] ~= '' then redis.call('hset', KEYS[2 + i], 'trace', ARGV[at + 3]) end
  redis.call('zadd', KEYS[1], ARGV[2], id)
  redis.call('sadd', KEYS[2], id)
end
for j = 3 + n, #KEYS do
  redis.call('lpush', KEYS[j], ARGV[4 + 4 * n + j - (3 + n)])
end
return n
