-- A rate limit shared by every instance: a token bucket kept as one number,
-- the "theoretical arrival time" of GCRA (ms, Redis' clock). A client may take
-- `burst` tokens at once and earns one back every `interval` ms.
--
-- KEYS: 1 the limit's key (one client: an address or a player)
-- ARGV: 1 interval ms, 2 burst, 3 'take' or 'give' (give back a token taken)
-- Returns 0 when the token was taken (or given back), else the ms until one is free.
local key, interval, burst = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tat = math.max(tonumber(redis.call('GET', key) or '0'), now)
if ARGV[3] == 'give' then
  tat = tat - interval
  if tat <= now then
    redis.call('DEL', key)
  else
    redis.call('SET', key, string.format('%d', tat), 'PX', tat - now)
  end
  return 0
end
local after = tat + interval
local wait = after - burst * interval - now
if wait > 0 then
  return wait
end
redis.call('SET', key, string.format('%d', after), 'PX', after - now)
return 0
