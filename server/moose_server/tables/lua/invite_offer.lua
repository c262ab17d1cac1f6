-- Make a rematch or challenge offer (tables/invites.py), unless one is open already.
-- KEYS: 1 the offer (keys.offer_key), 2 the sender's open challenges (keys.open_offers_key)
-- ARGV: 1 the offer (JSON: id, kind, from, seats, need = {player: true}, ...),
--       2 ms the others have to answer, 3 open challenges the sender may have (0: not
--       counted, a rematch), 4 ms the offer is kept after it closes
-- Returns JSON: {offer} made, {exists} an open or started offer, or {err = "too_many"}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wait, most, grace = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local raw = redis.call('GET', KEYS[1])
if raw then
  local o = cjson.decode(raw)
  if o.status == 'started' or (o.status == 'open' and now <= o.expires) then
    return cjson.encode({exists = o})
  end
end
if most > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= most then
    return cjson.encode({err = 'too_many'})
  end
end
local o = cjson.decode(ARGV[1])
o.status, o.expires = 'open', now + wait
redis.call('SET', KEYS[1], cjson.encode(o), 'PX', wait + grace)
if most > 0 then
  redis.call('ZADD', KEYS[2], o.expires, o.id)
  redis.call('PEXPIRE', KEYS[2], wait + grace)
end
return cjson.encode({offer = o})
