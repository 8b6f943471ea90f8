-- Accept deliveries and publish their messages: the records first, so a message is never read
-- before its delivery is recorded. One command, not a pipeline of 3n + m: an agent's
-- Client.add packs and parses one request and one reply (outbox.accept: one call per bucket
-- and the messages apart when the state is a Redis Cluster or the broker another Redis).
-- KEYS: per delivery its record, its bucket's outbox and in-flight set; then each message's
--       queue (none: the caller pushes them)
-- ARGV: enqueued_at, deadline, n, then per delivery: id, user, batch, trace ("": none);
--       then the m messages
local n = tonumber(ARGV[3])
for i = 1, n do
  local at = 4 * i
  local id = ARGV[at]
  local record, outbox, inflight = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  redis.call('hset', record, 'user', ARGV[at + 1], 'batch', ARGV[at + 2],
             'enqueued_at', ARGV[1], 'state', 'queued')
  if ARGV[at + 3] ~= '' then redis.call('hset', record, 'trace', ARGV[at + 3]) end
  redis.call('zadd', outbox, ARGV[2], id)
  redis.call('sadd', inflight, id)
end
for j = 3 * n + 1, #KEYS do
  redis.call('lpush', KEYS[j], ARGV[4 + 4 * n + j - (3 * n + 1)])
end
return n
