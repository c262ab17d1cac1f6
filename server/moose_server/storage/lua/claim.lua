-- Claim the due deadlines of one bucket: each claimed entry is pushed a lease
-- into the future, so it fires again only if its claimer dies before committing.
--
-- Every claim also stamps the bucket's poll key with Redis' time. A stamp older
-- than the outage threshold means nobody could claim this bucket for that long
-- (Redis was unreachable or restarted, or no instance ran): every deadline
-- before now + grace is moved to now + grace, and nothing is claimed, so that
-- players whose time ran out meanwhile get the grace after the service is back.
-- A stamp older than one the caller's own last claim wrote (ARGV 5) means Redis
-- came back without its last writes: the same, whatever the gap, so
-- that no deadline of a game that went back fires before its players are told.
--
-- KEYS: 1 deadlines sorted set, 2 the bucket's poll key
-- ARGV: 1 lease ms, 2 at most this many entries, 3 outage threshold ms, 4 grace ms,
--       5 the Redis time of the caller's last claim of this bucket (0: none)
-- Returns {now_ms, outage, id, id, ...}; outage is 0, or the gap in ms and then
-- the ids are those of the deadlines moved (not claimed).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The stamp read and written in one command (SET ... GET, Redis 6.2).
local last = tonumber(redis.call('SET', KEYS[2], string.format('%d', now), 'GET') or '0')
local mine = tonumber(ARGV[5])
local went_back = mine > 0 and last < mine
if went_back or (last > 0 and now - last > tonumber(ARGV[3])) then
  if last == 0 then last = mine end
  local floor = string.format('%d', now + tonumber(ARGV[4]))
  local late = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. floor)
  local out = {now, math.max(1, now - last)}
  for _, id in ipairs(late) do
    redis.call('ZADD', KEYS[1], 'XX', floor, id)
    out[#out + 1] = id
  end
  return out
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now),
  'LIMIT', 0, tonumber(ARGV[2]))
local until_ms = string.format('%d', now + tonumber(ARGV[1]))
local out = {now, 0}
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', until_ms, id)
  out[#out + 1] = id
end
return out
