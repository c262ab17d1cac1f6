-- Spare a seat whose player's instance died: move the game's deadline, due now,
-- to `grace` ms from now (Redis' clock), once a turn. The game's field 'spared'
-- keeps the version whose deadline was moved, so that whichever instance claims
-- the deadline next plays it (commit.lua checks the deadline it was claimed for).
--
-- KEYS: 1 game hash, 2 deadlines sorted set (the game's bucket)
-- ARGV: 1 game id, 2 the game's version, 3 the deadline due (ms), 4 grace ms
-- Returns the new deadline (ms); 0: not moved (the game moved on, its deadline
-- changed, or this turn was spared already).
local got = redis.call('HMGET', KEYS[1], 'v', 'dl', 'spared')
local version = tonumber(got[1] or '0')
if version ~= tonumber(ARGV[2]) or tonumber(got[2] or '0') ~= tonumber(ARGV[3]) then
  return 0
end
if tonumber(got[3] or '-1') == version then
  return 0
end
local t = redis.call('TIME')
local floor = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[4])
local d = string.format('%d', floor)
redis.call('HSET', KEYS[1], 'dl', d, 'spared', string.format('%d', version))
redis.call('ZADD', KEYS[2], 'XX', d, ARGV[1])
return floor
