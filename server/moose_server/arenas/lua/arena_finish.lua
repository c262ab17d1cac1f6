-- Close an arena whose window is over once its last game is scored: the final
-- standings and its winners (every member with the top score, if above 0).
-- `now` ('1') ends the window at once (an operator's `moose admin arena end`);
-- games under way still count.
-- A closed arena's keys are kept `keep` seconds, and arenas that ended longer
-- ago than that leave the list.
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 arena id,
-- 2 now ('1'/'0'), 3 keep (s).
-- Returns JSON {status: open|closing|over, winners, end, awarded} or {err}.
local a = redis.call('HMGET', K_ARENA, 'status', 'end', 'running', 'awarded', 'winners')
if not a[1] then return cjson.encode({err = 'no_such_arena'}) end
local now = now_ms()
local stop = tonumber(a[2])
if ARGV[2] == '1' and a[1] == 'open' and now < stop then
  stop = now
  redis.call('HSET', K_ARENA, 'end', string.format('%d', now))
  redis.call('ZADD', K_ARENAS, string.format('%d', now), ARENA)
  redis.call('HINCRBY', K_ARENA, 'ver', 1)
end
if a[1] == 'over' then
  return cjson.encode({status = 'over', winners = cjson.decode(a[5]), ['end'] = stop,
    awarded = a[4] == '1'})
end
if now < stop then return cjson.encode({status = 'open'}) end
redis.call('DEL', K_WAITING)
if tonumber(a[3]) > 0 then return cjson.encode({status = 'closing'}) end
local winners = {}
local top = redis.call('ZREVRANGE', K_POINTS, 0, 0, 'WITHSCORES')
if #top > 0 and tonumber(top[2]) > 0 then
  winners = redis.call('ZRANGEBYSCORE', K_POINTS, top[2], top[2])
end
local text = #winners > 0 and cjson.encode(winners) or '[]'
redis.call('HSET', K_ARENA, 'status', 'over', 'winners', text)
redis.call('HINCRBY', K_ARENA, 'ver', 1)
local keep = tonumber(ARGV[3])
for _, key in ipairs({K_ARENA, K_MEMBERS, K_POINTS, K_GAMES, K_SCORED}) do
  redis.call('EXPIRE', key, keep)
end
local old = redis.call('ZRANGEBYSCORE', K_ARENAS, '-inf', string.format('%d', now - keep * 1000),
  'LIMIT', 0, 100)
if #old > 0 then redis.call('ZREM', K_ARENAS, unpack(old)) end
return cjson.encode({status = 'over', winners = winners, ['end'] = stop, awarded = false})
