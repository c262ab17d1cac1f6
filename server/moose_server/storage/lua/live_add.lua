-- Add a public game to the index of live games; keep the newest ARGV[3] only.
--
-- KEYS: 1 games sorted set (id -> start ms), 2 summaries hash
-- ARGV: 1 game id, 2 summary blob, 3 the most games kept, 4 its start time (Redis ms,
--       as its first commit read it; 0 or none: Redis' clock now)
-- Returns the start time (Redis ms).
local now = tonumber(ARGV[4] or '0') or 0
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  redis.call('ZREM', KEYS[1], unpack(old))
  redis.call('HDEL', KEYS[2], unpack(old))
end
return now
