-- A member joins (or comes back), pauses or leaves an arena.
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 arena id, 2 player, 3 action (join,
-- pause, leave), 4 for join: the member JSON {name, min, max, bot, r, ip}.
-- A member waits (in the waiting set, seated by the arena's loop), plays (in
-- `busy`: back to waiting when the game is scored, unless paused or gone
-- meanwhile), is paused, or has left; points stay with them whatever they do.
-- Returns JSON {state, playing} or {err}.
local player, action = ARGV[2], ARGV[3]
local a = redis.call('HMGET', K_ARENA, 'status', 'end')
if not a[1] then return cjson.encode({err = 'no_such_arena'}) end
local now = now_ms()
local open = a[1] == 'open' and now < tonumber(a[2])
local raw = redis.call('HGET', K_MEMBERS, player)
local m = raw and cjson.decode(raw)
local playing = redis.call('HGET', K_BUSY, player)
local here = false
if playing then
  local g = redis.call('HGET', K_GAMES, playing)
  here = g ~= false
end
if action == 'join' then
  if not open then return cjson.encode({err = 'arena_over'}) end
  local new = cjson.decode(ARGV[4])
  new.games = m and m.games or 0
  new.state = 'wait'
  m = new
  redis.call('ZADD', K_POINTS, 'NX', 0, player)
  if not here and not redis.call('ZSCORE', K_WAITING, player) then
    -- At the back of the line (a ticket number); one already waiting keeps their place.
    redis.call('ZADD', K_WAITING, redis.call('HINCRBY', K_ARENA, 'line', 1), player)
  end
else
  if not m or m.state == 'left' then return cjson.encode({err = 'not_member'}) end
  m.state = action == 'pause' and 'paused' or 'left'
  redis.call('ZREM', K_WAITING, player)
end
redis.call('HSET', K_MEMBERS, player, cjson.encode(m))
redis.call('HINCRBY', K_ARENA, 'ver', 1)
return cjson.encode({state = m.state, playing = here})
