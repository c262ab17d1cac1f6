-- Drop every ticket taken through one server instance. ARGV: nonce, instance.
-- A full scan, but it runs only when an instance is found dead.
local function main()
  local all = redis.call('HGETALL', K_TICKETS)
  local n = 0
  for i = 1, #all, 2 do
    local t = cjson.decode(all[i + 1])
    if t.inst == ARGV[2] then
      drop_ticket(all[i], t)
      n = n + 1
    end
  end
  redis.call('HDEL', K_INSTS, ARGV[2])
  return cjson.encode({dropped = n})
end
