-- Add a member to a set of bounded size (blocks, follows, followers: issue 25),
-- atomically, so that two instances adding at once cannot pass the bound.
--
-- KEYS: 1 the set
-- ARGV: 1 member, 2 most members, 3 ttl ms (renewed on every add)
-- Returns 1 when added, 0 when it was there already, -1 when the set is full.
local key, member, most = KEYS[1], ARGV[1], tonumber(ARGV[2])
if redis.call('SISMEMBER', key, member) == 1 then
  return 0
end
if redis.call('SCARD', key) >= most then
  return -1
end
redis.call('SADD', key, member)
redis.call('PEXPIRE', key, ARGV[3])
return 1
