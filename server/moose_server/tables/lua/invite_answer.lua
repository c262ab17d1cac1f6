-- Answer an offer (tables/invites.py): accept, decline, cancel (its sender) or expire.
-- One step decides each race: of two last accepts on two instances one starts the
-- game; of an accept and the expiry, whichever runs first wins and the other
-- changes nothing. Past its time an offer is expired by whoever touches it first.
-- KEYS: 1 the offer, 2 its sender's open challenges
-- ARGV: 1 action ('accept', 'decline', 'cancel', 'expire'), 2 player, 3 a decline's
--       reason, 4 the id of the game a start deals (a fresh one per call)
-- Returns JSON: {started}, {open} (still waiting for others), {ended} (this call closed
-- it: declined, cancelled or expired), {closed} (closed before), {early} (an expire
-- before its time), or {err = "gone" | "not_invited" | "not_yours"}.
local raw = redis.call('GET', KEYS[1])
if not raw then return cjson.encode({err = 'gone'}) end
local o = cjson.decode(raw)
local action, player = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function close(status)
  o.status = status
  redis.call('SET', KEYS[1], cjson.encode(o), 'KEEPTTL')
  redis.call('ZREM', KEYS[2], o.id)
end

if o.status ~= 'open' then return cjson.encode({closed = o}) end
if now > o.expires then
  close('expired')
  return cjson.encode({ended = o})
end
if action == 'expire' then return cjson.encode({early = o}) end
if action == 'cancel' then
  if player ~= o.from then return cjson.encode({err = 'not_yours'}) end
  close('cancelled')
  return cjson.encode({ended = o})
end
if not o.need[player] then return cjson.encode({err = 'not_invited'}) end
if action == 'decline' then
  o.by, o.reason = player, ARGV[3]
  close('declined')
  return cjson.encode({ended = o})
end
o.accepted[player] = true
for p, _ in pairs(o.need) do
  if not o.accepted[p] then
    redis.call('SET', KEYS[1], cjson.encode(o), 'KEEPTTL')
    return cjson.encode({open = o})
  end
end
o.next = ARGV[4]
close('started')
return cjson.encode({started = o})
