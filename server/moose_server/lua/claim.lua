-- Claim the due deadlines of one bucket: each claimed entry is pushed a lease
-- into the future, so it fires again only if its claimer dies before committing.
--
-- KEYS: 1 deadlines sorted set
-- ARGV: 1 lease ms, 2 at most this many entries
-- Returns {now_ms, id, id, ...}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now),
  'LIMIT', 0, tonumber(ARGV[2]))
local until_ms = string.format('%d', now + tonumber(ARGV[1]))
local out = {now}
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', until_ms, id)
  out[#out + 1] = id
end
return out
