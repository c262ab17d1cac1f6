-- Take a player's ticket out of the queue. ARGV: nonce, player.
local function main()
  local raw = redis.call('HGET', K_TICKETS, ARGV[2])
  if not raw then
    redis.call('ZREM', K_QUEUE, ARGV[2]) -- heal a queue entry without a ticket
    REMEMBER = false
    return cjson.encode({left = false})
  end
  drop_ticket(ARGV[2], cjson.decode(raw))
  return cjson.encode({left = true})
end
