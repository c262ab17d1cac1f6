-- A player leaves a private table. ARGV: nonce, code, player, ttl_us.
-- A leaving host hands the table to the next human in seat order; with no
-- human left the table closes ({"closed": true}). A player not seated there gets
-- bad_code, as for a table that does not exist: the table is no stranger's to see.
local function main()
  local code, player, ttl = ARGV[2], ARGV[3], tonumber(ARGV[4])
  local t, now = open_table(code)
  local i = t and seat_of(t, player)
  if not i then return fail('bad_code') end
  t.seats[i] = cjson.null
  redis.call('HDEL', K_SEATED, player)
  if t.host == player then
    local heir = nil
    for _, seat in ipairs(t.seats) do
      if seat ~= cjson.null and seat.player then heir = heir or seat.player end
    end
    if not heir then
      drop_table(code, t)
      return cjson.encode({closed = true})
    end
    t.host = heir
  end
  save_table(code, t, now, ttl)
  return cjson.encode(t)
end
