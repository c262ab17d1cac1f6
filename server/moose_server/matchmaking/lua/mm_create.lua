-- Open a private table with the host in seat 0.
-- ARGV: nonce, code, host, name, players, ttl_us, rated ('1'/'0'), host is a bot ('1'/'0'),
--       the host asked for a fair deal ('1'/'0'), days per move (0: real time).
local function main()
  local code, host, name, players, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
  local now = now_us()
  purge_tables(now)
  if in_queue(host) then return fail('already_queued') end
  local at = seated_at(host, now)
  if at then return fail('already_seated', at) end
  if load_table(code, now) then return fail('code_taken') end
  local seats = {{player = host, name = name, is_bot = ARGV[8] == '1' or nil,
                  fair = ARGV[9] == '1' or nil}}
  for i = 2, players do seats[i] = cjson.null end
  local days = tonumber(ARGV[10])
  local t = {host = host, players = players, seats = seats, rated = ARGV[7] == '1',
             days = days > 0 and days or nil}
  save_table(code, t, now, ttl)
  redis.call('HSET', K_SEATED, host, code)
  return cjson.encode(t)
end
