-- The prelude of every arena script (storage/scripts.py puts it first): the
-- arena's keys (keys.ArenaKeys, in order) and its id, the first ARGV.
local K_ARENAS, K_BUSY, K_ARENA, K_MEMBERS, K_WAITING = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_POINTS, K_GAMES, K_SCORED, K_PENDING, K_LEASES = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local ARENA = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
