-- A seat's seed for a deal that waits (deals/deals.py).
--
-- KEYS: 1 the deal hash, 2 the game hash
-- ARGV: 1 the seat, 2 its seed, 3 a nonce (a resent call gets the first answer)
-- Returns one of {'ok'}; {'all'}: the last seed awaited, the deal is closed
-- (no seed is taken after) and the caller deals; {'dealt'}: too late;
-- {'none'}: no such deal nor game; {'not_fair'}: the seat did not ask for a fair
-- deal; {'dup'}: the seat sent its seed already.
if redis.call('HEXISTS', KEYS[1], 'data') == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return {'dealt'} end
  return {'none'}
end
local seat = ARGV[1]
local sent = redis.call('HGET', KEYS[1], 'n' .. seat)
local closed = redis.call('HEXISTS', KEYS[1], 'closed') == 1
if sent == ARGV[3] then
  return {closed and 'all' or 'ok'}
end
if closed then return {'dealt'} end
if redis.call('HEXISTS', KEYS[1], 'f' .. seat) == 0 then return {'not_fair'} end
if sent then return {'dup'} end
redis.call('HSET', KEYS[1], 's' .. seat, ARGV[2], 'n' .. seat, ARGV[3])
if redis.call('HINCRBY', KEYS[1], 'wait', -1) <= 0 then
  redis.call('HSET', KEYS[1], 'closed', '1')
  return {'all'}
end
return {'ok'}
