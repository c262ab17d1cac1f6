-- A waiting player asks for a table of `players` now, the seats nobody waiting can
-- take filled with the server's bots: the ticket is marked, and the next mm_form.lua
-- seats it as it seats a ticket that waited bots_after.
-- ARGV: nonce, player, players (a size in the ticket's range; 0: its minimum), offer_after_us (the
-- ticket must have waited that long).
-- Reply: {since (ms), min, max, bots}, or the refusals not_queued, too_early,
-- bad_size (players outside the ticket's range).
local function main()
  local player, size, after = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
  local raw = redis.call('HGET', K_TICKETS, player)
  local score = redis.call('ZSCORE', K_QUEUE, player)
  if not raw or not score then return fail('not_queued') end
  local t = cjson.decode(raw)
  if size == 0 then size = t.min end
  if size < t.min or size > t.max then return fail('bad_size') end
  if now_us() - tonumber(score) < after then return fail('too_early') end
  t.bots = size
  redis.call('HSET', K_TICKETS, player, cjson.encode(t))
  local since = int(math.floor(tonumber(score) / 1000))
  return cjson.encode({since = since, min = t.min, max = t.max, bots = size})
end
