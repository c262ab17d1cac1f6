-- Apply a finished arena game's points, once whoever calls (the instance that
-- ended it, or any instance's results sweep should that one die first).
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 arena id, 2 game id, 3 JSON {players,
-- points, places, away, rest} per seat. A seated member goes back to waiting unless
-- they paused or left meanwhile, or were away at the end (then they are paused);
-- nobody waits once the window is over. A person (not a bot) who waits rests
-- `rest` ms first: `next` says when they may be seated again. Those back in
-- line queue behind those waiting (arena_seat.lua seats who waited longest first).
-- Returns JSON {ok} or {dup}.
local gid = ARGV[2]
if redis.call('SADD', K_SCORED, gid) == 0 then return cjson.encode({dup = true}) end
local now = now_ms()
local a = redis.call('HMGET', K_ARENA, 'status', 'end')
local open = a[1] == 'open' and now < tonumber(a[2] or '0')
local r = cjson.decode(ARGV[3])
local raw = redis.call('HGET', K_GAMES, gid)
local g = raw and cjson.decode(raw) or {players = r.players}
if g.key then
  redis.call('HDEL', K_PENDING, g.key)
  redis.call('ZREM', K_LEASES, g.key)
end
for i, p in ipairs(r.players) do
  redis.call('ZINCRBY', K_POINTS, r.points[i], p)
  if redis.call('HGET', K_BUSY, p) == gid then redis.call('HDEL', K_BUSY, p) end
  local mraw = redis.call('HGET', K_MEMBERS, p)
  if mraw then
    local m = cjson.decode(mraw)
    m.games = (m.games or 0) + 1
    if r.away[i] and m.state == 'wait' then m.state = 'paused' end
    if m.state == 'wait' and open and not m.bot and (r.rest or 0) > 0 then m.next = now + r.rest end
    redis.call('HSET', K_MEMBERS, p, cjson.encode(m))
    if m.state == 'wait' and open then
      -- back in line, behind everyone waiting (a ticket number: no two alike)
      redis.call('ZADD', K_WAITING, redis.call('HINCRBY', K_ARENA, 'line', 1), p)
    end
  end
end
g.places, g.points, g['end'] = r.places, r.points, now
redis.call('HSET', K_GAMES, gid, cjson.encode(g))
if raw then redis.call('HINCRBY', K_ARENA, 'running', -1) end
redis.call('HINCRBY', K_ARENA, 'ver', 1)
return cjson.encode({ok = true})
