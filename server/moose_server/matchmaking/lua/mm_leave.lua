-- Take a player's ticket out of the queue. ARGV: nonce, player.
local function main()
  local raw = redis.call('HGET', K_TICKETS, ARGV[2])
  if not raw then
    -- (A queue entry without a ticket is healed by mm_enqueue.lua and mm_form.lua:
    -- a socket closing calls this for a player seldom queued, and writes nothing.)
    REMEMBER = false
    return cjson.encode({left = false})
  end
  drop_ticket(ARGV[2], cjson.decode(raw))
  return cjson.encode({left = true})
end
