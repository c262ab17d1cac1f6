-- The host starts a private table: the filled seats, in order, become the
-- game's seats and the table is gone, waiting to be dealt under a key (see
-- starting() in mm_lib.lua). ARGV: nonce, code, player, lease_us.
-- Reply: {"seats": [...], "key": key, "rated": bool, "days": days per move or absent}.
local function main()
  local code, player, lease = ARGV[2], ARGV[3], tonumber(ARGV[4])
  local t, now = open_table(code)
  if not t or not seat_of(t, player) then return fail('bad_code') end  -- strangers learn nothing
  if t.host ~= player then return fail('not_host') end
  local seats = {}
  for _, seat in ipairs(t.seats) do
    if seat ~= cjson.null then seats[#seats + 1] = seat end
  end
  if #seats < 2 then return fail('too_few') end
  drop_table(code, t)
  local key = NONCE .. ':t'
  local entry = {t = code, seats = seats, rated = t.rated == true, days = t.days}
  starting(key, cjson.encode(entry), now, lease)
  return cjson.encode({seats = seats, key = key, rated = t.rated == true, days = t.days})
end
