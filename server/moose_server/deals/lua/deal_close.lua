-- Close a waiting deal to seeds, so that it can be dealt (deals/deals.py).
--
-- KEYS: 1 the deal hash, 2 the bucket's deadline set
-- ARGV: 1 the deal's deadline member
-- Returns the deal hash's fields and values (HGETALL), or {} when no deal waits
-- (then its deadline member, if any, is dropped: it has nothing left to fire).
-- Closing twice is harmless: the seeds are those of the first close.
if redis.call('HEXISTS', KEYS[1], 'data') == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {}
end
redis.call('HSET', KEYS[1], 'closed', '1')
return redis.call('HGETALL', KEYS[1])
