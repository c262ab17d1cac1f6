-- Shared prelude of every mm_*.lua script; matchmaking.py puts it in front of
-- each script body (which defines main()) and mm_end.lua after it.
-- KEYS are keys.mm_keys() (every one shares the {mm} hash tag), then the call's
-- keys.mm_done_key; ARGV the fields of the script's call in scripts.py, after the nonce.
-- ARGV[1] is a nonce: a reply is remembered for a minute under it, so a call
-- that redis-py re-sends after a lost connection returns the first answer
-- instead of running twice (a formed table must never be lost).

if redis.replicate_commands then redis.replicate_commands() end -- TIME before writes on 6.2

local K_QUEUE, K_TICKETS, K_COUNTS = KEYS[1], KEYS[2], KEYS[3]
local K_TABLES, K_EXPIRY, K_SEATED = KEYS[4], KEYS[5], KEYS[6]
local K_INSTS, K_STARTING, K_STARTING_AT = KEYS[7], KEYS[8], KEYS[9]
local K_DONE = KEYS[10]

local NONCE = ARGV[1]
local DONE_KEEP_MS = 60000

-- Redis' clock, read once a call: every use in one call sees the same time.
local NOW
local function now_us()
  if not NOW then
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return NOW
end

-- Lua's tostring keeps 14 digits; microsecond times need 16.
local function int(n)
  return string.format('%.0f', n)
end

-- Only replies that changed something are remembered: re-running a refusal or
-- a call that found nothing to do is harmless, and idle polling stays read-only.
local REMEMBER = true
-- A script whose every run is harmless to repeat sets this: nothing to look up.
local REPLAYABLE = false

local function fail(code, at)
  REMEMBER = false
  return cjson.encode({err = code, at = at})
end

-- The tickets taken through each instance, so that a dead one's are found at once.
local function count_ticket(inst, by)
  if type(inst) == 'string' and inst ~= '' and redis.call('HINCRBY', K_INSTS, inst, by) <= 0 then
    redis.call('HDEL', K_INSTS, inst)
  end
end

-- t: the decoded ticket ({name, min, max, inst}).
local function drop_ticket(player, t)
  redis.call('ZREM', K_QUEUE, player)
  redis.call('HDEL', K_TICKETS, player)
  redis.call('HINCRBY', K_COUNTS, t.max, -1)
  count_ticket(t.inst, -1)
end

-- The player's ticket is now held by instance `inst` (same place in the queue).
-- False when the player has no ticket.
local function move_ticket(player, inst)
  local raw = redis.call('HGET', K_TICKETS, player)
  if not raw then return false end
  if type(inst) ~= 'string' or inst == '' then return true end
  local t = cjson.decode(raw)
  if t.inst == inst then return true end
  count_ticket(t.inst, -1)
  t.inst = inst
  t.s = inst -- held here, which reads a table's `match` messages as one (mm_form.lua)
  redis.call('HSET', K_TICKETS, player, cjson.encode(t))
  count_ticket(inst, 1)
  return true
end

local function drop_table(code, t)
  for _, seat in ipairs(t.seats) do
    if seat ~= cjson.null and seat.player and redis.call('HGET', K_SEATED, seat.player) == code then
      redis.call('HDEL', K_SEATED, seat.player)
    end
  end
  redis.call('HDEL', K_TABLES, code)
  redis.call('ZREM', K_EXPIRY, code)
end

-- A live table, or nil; a table past its expiry is dropped on sight.
local function load_table(code, now)
  local raw = redis.call('HGET', K_TABLES, code)
  if not raw then return nil end
  local t = cjson.decode(raw)
  local expires = tonumber(redis.call('ZSCORE', K_EXPIRY, code))
  if not expires or expires <= now then
    drop_table(code, t)
    return nil
  end
  return t
end

local function save_table(code, t, now, ttl_us)
  redis.call('HSET', K_TABLES, code, cjson.encode(t))
  redis.call('ZADD', K_EXPIRY, int(now + ttl_us), code)
end

local function seat_of(t, player)
  for i, seat in ipairs(t.seats) do
    if seat ~= cjson.null and seat.player == player then return i end
  end
  return nil
end

-- The code of the live table the player sits at, or nil (stale entries are cleaned).
local function seated_at(player, now)
  local code = redis.call('HGET', K_SEATED, player)
  if not code then return nil end
  local t = load_table(code, now)
  if t and seat_of(t, player) then return code end
  redis.call('HDEL', K_SEATED, player)
  return nil
end

-- Expired tables go a few at a time, so no single call pays for a backlog.
local function purge_tables(now)
  local codes = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', int(now), 'LIMIT', 0, 50)
  for _, code in ipairs(codes) do
    local raw = redis.call('HGET', K_TABLES, code)
    if raw then drop_table(code, cjson.decode(raw)) else redis.call('ZREM', K_EXPIRY, code) end
  end
end

-- How each call on one private table begins: the clock, a few expired tables
-- purged, then the live table under `code` (or nil) and the time.
local function open_table(code)
  local now = now_us()
  purge_tables(now)
  return load_table(code, now), now
end

-- A formed table waits here, under a key, until its game is dealt (mm_started.lua);
-- should that not happen within the lease, mm_form.lua hands it out again.
-- entry: JSON {"q": [bots, player, name, ...]} or {"t": code, "seats": [...]}.
local function starting(key, entry, now, lease_us)
  redis.call('HSET', K_STARTING, key, entry)
  redis.call('ZADD', K_STARTING_AT, int(now + lease_us), key)
  return '["' .. key .. '",' .. entry .. ']'
end

local function in_queue(player)
  return redis.call('ZSCORE', K_QUEUE, player) ~= false
end
