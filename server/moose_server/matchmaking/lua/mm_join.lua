-- Take the first empty seat of a private table.
-- ARGV: nonce, code, player, name, ttl_us, the player is a bot ('1'/'0'), asked for a
--       fair deal ('1'/'0').
local function main()
  local code, player, name, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
  -- Where the player is comes first, so that the answer tells a stranger no more
  -- about the code than bad_code does (a guess that finds a table is table_full).
  local t, now = open_table(code)
  local at = seated_at(player, now)
  if at then return fail('already_seated', at) end
  if in_queue(player) then return fail('already_queued') end
  if not t then return fail('bad_code') end
  for i, seat in ipairs(t.seats) do
    if seat == cjson.null then
      t.seats[i] = {player = player, name = name, is_bot = ARGV[6] == '1' or nil,
                    fair = ARGV[7] == '1' or nil}
      save_table(code, t, now, ttl)
      redis.call('HSET', K_SEATED, player, code)
      return cjson.encode(t)
    end
  end
  return fail('table_full')
end
