-- Put a ticket in the queue. ARGV: nonce, player, ticket (JSON), max players.
-- The score is Redis time in microseconds, made greater than every ticket's in
-- the queue so that "oldest first" is a total order even for tickets within one
-- microsecond.
-- A player queued already keeps their ticket and place, now taken through this
-- instance: they came back on a new socket here (theirs died with its instance),
-- so it is this instance's heartbeat that keeps the ticket from now on.
-- Whether the player was queued is ZADD NX's answer: no read of its own.
local function main()
  local player, ticket, max = ARGV[2], ARGV[3], ARGV[4]
  local now = now_us()
  local at = seated_at(player, now)
  if at then return fail('already_queued', at) end
  -- After the newest ticket waiting: only the tickets in the queue need an order.
  local newest = redis.call('ZRANGE', K_QUEUE, -1, -1, 'WITHSCORES')
  local score = int(math.max(now, (tonumber(newest[2]) or 0) + 1))
  if redis.call('ZADD', K_QUEUE, 'NX', score, player) == 0 then
    if move_ticket(player, cjson.decode(ticket).inst) then return fail('already_queued') end
    redis.call('ZADD', K_QUEUE, score, player) -- heal a queue entry without a ticket
  end
  redis.call('HSET', K_TICKETS, player, ticket)
  redis.call('HINCRBY', K_COUNTS, max, 1)
  count_ticket(cjson.decode(ticket).inst, 1)
  return cjson.encode({since = int(math.floor(tonumber(score) / 1000))})
end
