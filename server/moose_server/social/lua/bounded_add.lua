-- Add a field to a hash of bounded size (blocks, follows, followers),
-- atomically, so that two instances adding at once cannot pass the bound.
--
-- KEYS: 1 the hash (player id -> name)
-- ARGV: 1 field, 2 its value, 3 most fields, 4 ttl ms (renewed on every add)
-- Returns 1 when added, 0 when it was there already (its value is renewed),
-- -1 when the hash is full.
local key, field, most = KEYS[1], ARGV[1], tonumber(ARGV[3])
local there = redis.call('HEXISTS', key, field) == 1
if not there and redis.call('HLEN', key) >= most then
  return -1
end
redis.call('HSET', key, field, ARGV[2])
redis.call('PEXPIRE', key, ARGV[4])
if there then
  return 0
end
return 1
