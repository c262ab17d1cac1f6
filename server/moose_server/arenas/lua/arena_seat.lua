-- Seat an arena's waiting members together, and hand out again the tables
-- whose dealer did not deal them within the lease.
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 arena id, 2 lease ms, 3 members looked at.
-- The waiting set is ordered by when each member began to wait (joined, or their
-- last game was scored: a ticket number), so whoever has waited longest starts
-- the next table; beside them sit those whose table sizes fit, who played the
-- fewest games of the arena first, then the nearest in points, then in rating.
-- Members of one address (`ip`, a digest) sit together only when no one else
-- free can fill the table. A member is seated only while in no arena game
-- (`busy`), so nobody plays two at once, nor while resting after one (`next`);
-- the game id comes from the table key (lobby/dealer.game_id_of), so whoever
-- deals a table deals the same game.
-- Returns JSON [[table key, {key, game, seats: [{player, name, bot}]}], ...].
local now = now_ms()
local lease = tonumber(ARGV[2])
local out = {}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', K_LEASES, '-inf', now)) do
  local info = redis.call('HGET', K_PENDING, key)
  if info then
    redis.call('ZADD', K_LEASES, now + lease, key)
    out[#out + 1] = {key, cjson.decode(info)}
  else
    redis.call('ZREM', K_LEASES, key)
  end
end
local a = redis.call('HMGET', K_ARENA, 'status', 'start', 'end')
if a[1] ~= 'open' or now < tonumber(a[2]) or now >= tonumber(a[3]) then
  return cjson.encode(out)
end
local cands = {}
for _, p in ipairs(redis.call('ZRANGE', K_WAITING, 0, tonumber(ARGV[3]) - 1)) do
  if redis.call('HEXISTS', K_BUSY, p) == 0 then
    local raw = redis.call('HGET', K_MEMBERS, p)
    local m = raw and cjson.decode(raw)
    if m and m.state == 'wait' then
      -- A person resting after a game (arena_score.lua's `next`) stays in line.
      if not m.next or m.next <= now then
        local pts = tonumber(redis.call('ZSCORE', K_POINTS, p) or '0')
        cands[#cands + 1] = {p = p, m = m, pts = pts, at = #cands}
      end
    else
      redis.call('ZREM', K_WAITING, p)
    end
  end
end

local used = {}
-- The others who may join the table of cands[i]: who played fewest games here
-- first, then the nearest in points, then in rating.
local function others(i)
  local c, list = cands[i], {}
  for j = 1, #cands do  -- those ahead in line too, when their own table did not form
    if j ~= i and not used[j] then list[#list + 1] = j end
  end
  table.sort(list, function(x, y)
    local gx, gy = cands[x].m.games or 0, cands[y].m.games or 0
    if gx ~= gy then return gx < gy end
    local dx, dy = math.abs(cands[x].pts - c.pts), math.abs(cands[y].pts - c.pts)
    if dx ~= dy then return dx < dy end
    dx, dy = math.abs(cands[x].m.r - c.m.r), math.abs(cands[y].m.r - c.m.r)
    if dx ~= dy then return dx < dy end
    return x < y
  end)
  return list
end

-- Add to `group` (sizes lo..hi) those of `list` whose sizes fit; `mixed` allows
-- one address twice.
local function fill(group, lo, hi, list, mixed)
  local ips = {}
  for _, j in ipairs(group) do
    if cands[j].m.ip then ips[cands[j].m.ip] = true end
  end
  for _, j in ipairs(list) do
    if #group >= hi then break end
    local inside = false
    for _, k in ipairs(group) do
      if k == j then inside = true end
    end
    local ip = cands[j].m.ip
    if not inside and (mixed or not ip or not ips[ip]) then
      local nlo, nhi = math.max(lo, cands[j].m.min), math.min(hi, cands[j].m.max)
      if nlo <= nhi and #group + 1 <= nhi then
        group[#group + 1] = j
        lo, hi = nlo, nhi
        if ip then ips[ip] = true end
      end
    end
  end
  return lo, hi
end

local function deal(group)
  local key = 'a:' .. ARENA .. ':' .. redis.call('HINCRBY', K_ARENA, 'seq', 1)
  local gid = 'g_' .. string.sub(redis.sha1hex(key), 1, 10)
  local seats, players, names = {}, {}, {}
  for _, j in ipairs(group) do
    used[j] = true
    local c = cands[j]
    seats[#seats + 1] = {player = c.p, name = c.m.name, bot = c.m.bot}
    players[#players + 1] = c.p
    names[#names + 1] = c.m.name
    redis.call('ZREM', K_WAITING, c.p)
    redis.call('HSET', K_BUSY, c.p, gid)
  end
  local info = {key = key, game = gid, seats = seats}
  redis.call('HSET', K_PENDING, key, cjson.encode(info))
  redis.call('ZADD', K_LEASES, now + lease, key)
  redis.call('HSET', K_GAMES, gid, cjson.encode({key = key, players = players,
    names = names, start = now}))
  redis.call('HINCRBY', K_ARENA, 'running', 1)
  redis.call('HINCRBY', K_ARENA, 'ver', 1)
  out[#out + 1] = {key, info}
end

for i = 1, #cands do
  if not used[i] then
    local group, list = {i}, others(i)
    local lo, hi = fill(group, cands[i].m.min, cands[i].m.max, list, false)
    if #group < math.max(lo, 2) then
      lo, hi = fill(group, lo, hi, list, true)
    end
    if #group >= math.max(lo, 2) then deal(group) end
  end
end
return cjson.encode(out)
