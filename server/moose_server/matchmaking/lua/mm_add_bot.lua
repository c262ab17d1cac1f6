-- The host puts a bot in the first empty seat. ARGV: nonce, code, player, bot, ttl_us.
-- Bots are named "<bot>-bot <n>", n counting the bots of that kind at the table.
local function main()
  local code, player, bot, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
  local t, now = open_table(code)
  if not t or not seat_of(t, player) then return fail('bad_code') end  -- strangers learn nothing
  if t.host ~= player then return fail('not_host') end
  local same, free = 0, nil
  for i, seat in ipairs(t.seats) do
    if seat == cjson.null then
      free = free or i
    elseif seat.bot == bot then
      same = same + 1
    end
  end
  if not free then return fail('table_full') end
  t.seats[free] = {name = bot .. '-bot ' .. (same + 1), bot = bot}
  save_table(code, t, now, ttl)
  return cjson.encode(t)
end
