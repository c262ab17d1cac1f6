-- A provably fair deal waits for the seats' seeds (deals/deals.py).
--
-- KEYS: 1 the deal hash, 2 the game hash, 3 the bucket's deadline set
-- ARGV: 1 the deal's deadline member, 2 the deal's data blob, 3 seed time ms,
--       4 the deal hash's ttl seconds, then the fair seats (one argument each)
-- Returns {'dealt'} when the game exists already, {'open', data} when the deal
-- waits already (opened by another instance: its data, with its server seed,
-- stands), or {'new', data}. The deadline member fires after the seed time,
-- whoever sent what by then.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {'dealt'}
end
local data = redis.call('HGET', KEYS[1], 'data')
if data then
  return {'open', data}
end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'wait', #ARGV - 4)
for i = 5, #ARGV do
  redis.call('HSET', KEYS[1], 'f' .. ARGV[i], '1')
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[3], string.format('%d', now + tonumber(ARGV[3])), ARGV[1])
return {'new', ARGV[2]}
