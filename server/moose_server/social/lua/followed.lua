-- What a `following` answer shows of some followed players, read in one call:
-- whether each is online (some instance's word in their presence hash has not
-- lapsed, as social/presence.py reads it), their unfinished games and, where
-- their profile keys are given, the name their profile holds.
--
-- KEYS: for each of the n players, 1 their presence hash, 2 their set of
-- unfinished games; then, when names are read, the n players' profile hashes
-- (on one node only: a cluster holds those in another slot).
-- ARGV: 1 n
-- Returns for each player {online 1 or 0, games (unsorted), name or ""}.
local n = tonumber(ARGV[1])
local named = #KEYS > 2 * n
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = {}
for i = 1, n do
  local fields = redis.call('HGETALL', KEYS[2 * i - 1])
  local online = 0
  for f = 1, #fields, 2 do
    if fields[f] ~= 'name' and (tonumber(fields[f + 1]) or 0) > now then
      online = 1
      break
    end
  end
  local name = ''
  if named then
    name = redis.call('HGET', KEYS[2 * n + i], 'name') or ''
  end
  out[i] = {online, redis.call('SMEMBERS', KEYS[2 * i]), name}
end
return out
