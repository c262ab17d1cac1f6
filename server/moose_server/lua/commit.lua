-- Commit one step of a game: version check, idempotent move id, new state,
-- events appended to the game's stream, deadline set or cleared, wake-up.
--
-- KEYS: 1 game hash, 2 events stream, 3 deadlines sorted set (one bucket),
--       4 the bucket's unrated games (sorted set), 5 the game's kept record
-- ARGV: 1 expected version, 2 move-id field ('' = none), 3 game data blob,
--       4 deadline: ms from now (> 0), 0 = clear, -1 = keep,
--       5 game id, 6 wake-up channel, 7 ttl seconds (0 = none),
--       8 event count, 9 the record of a rated game that ends here, to keep ('' = none),
--       10 its ttl seconds (0: no rated game ends here), then per event: event blob,
--       state blob
-- A rated game's end also puts it among the bucket's unrated games, in this same
-- step: whoever rates it takes it out, and should that instance die first,
-- another one finds it there (results.py).
-- Returns {status, seq, now_ms, deadline_ms}; status is ok, dup or stale.
local game, events, deadlines = KEYS[1], KEYS[2], KEYS[3]
local mid = ARGV[2]
if mid ~= '' then
  local prev = redis.call('HGET', game, mid)
  if prev then
    return {'dup', tonumber(prev), 0, 0}
  end
end
local version = tonumber(redis.call('HGET', game, 'v') or '0')
if version ~= tonumber(ARGV[1]) then
  return {'stale', version, 0, 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delta = tonumber(ARGV[4])
local gid = ARGV[5]
local deadline = 0
if delta > 0 then
  deadline = now + delta
  redis.call('ZADD', deadlines, string.format('%d', deadline), gid)
elseif delta == 0 then
  redis.call('ZREM', deadlines, gid)
else
  deadline = tonumber(redis.call('HGET', game, 'dl') or '0')
end
local count = tonumber(ARGV[8])
local seq = version
local first = version + 1
for i = 1, count do
  seq = seq + 1
  redis.call('XADD', events, string.format('%d-0', seq),
    'e', ARGV[9 + 2 * i], 's', ARGV[10 + 2 * i],
    'd', string.format('%d', deadline), 't', string.format('%d', now))
end
redis.call('HSET', game, 'v', seq, 'data', ARGV[3], 'dl', string.format('%d', deadline))
if mid ~= '' then
  redis.call('HSET', game, mid, first)
end
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  redis.call('EXPIRE', game, ttl)
  redis.call('EXPIRE', events, ttl)
end
if tonumber(ARGV[10]) > 0 then -- a rated game ends here
  if ARGV[9] ~= '' then redis.call('SET', KEYS[5], ARGV[9], 'EX', ARGV[10]) end
  redis.call('ZADD', KEYS[4], now, gid)
end
redis.call('PUBLISH', ARGV[6], gid .. ' ' .. seq)
return {'ok', first, now, deadline}
