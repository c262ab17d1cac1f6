-- Defer a game's deadlines at least `grace` ms from now (Redis' clock): the one it
-- has, in the bucket's deadlines and in the game's hash (what a `state` then
-- shows, and what a timeout claimed before must still find: commit.lua), and
-- those its next commits set until then (the hash's 'held'). Run when players are
-- told that their game went back (Redis lost its last writes), so that they have
-- the grace to answer the game as it is now and to send their lost moves again,
-- one after another, before any turn times out.
--
-- KEYS: 1 game hash, 2 deadlines sorted set (the game's bucket)
-- ARGV: 1 game id, 2 grace ms
-- Returns the game's deadline (ms) now; 0: no game, or it is over (no deadline).
local deadline = tonumber(redis.call('HGET', KEYS[1], 'dl') or '0')
if deadline == 0 then
  return 0
end
local t = redis.call('TIME')
local floor = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'held', string.format('%d', floor))
if deadline < floor then
  deadline = floor
  redis.call('HSET', KEYS[1], 'dl', string.format('%d', floor))
  redis.call('ZADD', KEYS[2], 'XX', string.format('%d', floor), ARGV[1])
end
return deadline
