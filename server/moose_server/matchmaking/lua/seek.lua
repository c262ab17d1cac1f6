-- A correspondence ticket of the public queue (matchmaking/seeks.py): paired with
-- the oldest other ticket of the same days per move, or queued until withdrawn or
-- `ttl` old. Tickets past their time go first.
-- KEYS: 1 the tickets of these days (sorted set: player -> ms queued), 2 the names
--       they queued with (hash: "<days>:<player>" -> name)
-- ARGV: 1 player, 2 name, 3 days, 4 ttl ms
-- Returns {'queued', ms queued} or {'paired', other player, their name}.
local queue, names = KEYS[1], KEYS[2]
local player, name, days, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local old = redis.call('ZRANGEBYSCORE', queue, '-inf', string.format('%d', now - ttl))
for _, p in ipairs(old) do
  redis.call('ZREM', queue, p)
  redis.call('HDEL', names, days .. ':' .. p)
end
local since = redis.call('ZSCORE', queue, player)
if since then
  return {'queued', since}
end
local other = redis.call('ZRANGE', queue, 0, 0)[1]
if other then
  redis.call('ZREM', queue, other)
  local field = days .. ':' .. other
  local other_name = redis.call('HGET', names, field) or other
  redis.call('HDEL', names, field)
  return {'paired', other, other_name}
end
redis.call('ZADD', queue, string.format('%d', now), player)
redis.call('HSET', names, days .. ':' .. player, name)
return {'queued', string.format('%d', now)}
