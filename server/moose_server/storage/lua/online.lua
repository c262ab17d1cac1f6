-- Write how many players this instance serves; return the whole service's count.
-- An instance that stops writing drops out once its entry lapses.
--
-- KEYS: 1 sorted set (instance -> lapses at, ms), 2 hash (instance -> players)
-- ARGV: 1 instance id, 2 its players, 3 ms until the entry lapses
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], string.format('%d', now + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
if #lapsed > 0 then
  redis.call('ZREM', KEYS[1], unpack(lapsed))
  redis.call('HDEL', KEYS[2], unpack(lapsed))
end
local total = 0
for _, n in ipairs(redis.call('HVALS', KEYS[2])) do
  total = total + tonumber(n)
end
return total
