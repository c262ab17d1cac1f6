-- Change the range of table sizes a waiting ticket accepts; it keeps its place.
-- ARGV: nonce, player, min players, max players.
-- Reply: {since (ms, the ticket's time), min, max}, or the refusal not_queued.
-- A table with bots asked for (mm_bots.lua) outside the new range is asked no more.
local function main()
  local player, low, high = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
  local raw = redis.call('HGET', K_TICKETS, player)
  local score = redis.call('ZSCORE', K_QUEUE, player)
  if not raw or not score then return fail('not_queued') end
  local t = cjson.decode(raw)
  redis.call('HINCRBY', K_COUNTS, t.max, -1)
  redis.call('HINCRBY', K_COUNTS, high, 1)
  t.min, t.max = low, high
  if t.bots and (t.bots < low or t.bots > high) then t.bots = nil end
  redis.call('HSET', K_TICKETS, player, cjson.encode(t))
  return cjson.encode({since = int(math.floor(tonumber(score) / 1000)), min = low, max = high})
end
