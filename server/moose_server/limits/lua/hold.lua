-- What one client holds (unfinished games, open tables): a sorted set of ids,
-- each scored by when it was taken (Redis ms). A hold is taken atomically
-- against the limit, so that several instances never let one client past it.
-- Ids that ended are pruned by the caller (quotas.py), which checks them
-- against the games' and tables' own state.
--
-- KEYS: 1 the hold's key (keys.hold_key)
-- ARGV: 1 'take' (add ARGV[4] if fewer than ARGV[2] are held), 'swap' (ARGV[5]
--       becomes ARGV[4]), 'drop' (remove ARGV[4] and ARGV[5]); 2 limit, 3 the
--       key's ttl ms, 4 id, 5 old id ('')
-- (Adding an id whatever the count needs no script: holdings.put.)
-- Returns how many are held after, or -1 when 'take' found the limit reached.
if redis.replicate_commands then redis.replicate_commands() end -- TIME before writes on 6.2
local key, op, limit, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local id, old = ARGV[4], ARGV[5]
if op == 'drop' then
  redis.call('ZREM', key, id)
  if old ~= '' then redis.call('ZREM', key, old) end
  return redis.call('ZCARD', key)
end
if op == 'take' and redis.call('ZCARD', key) >= limit then
  return -1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if op == 'swap' and old ~= '' then redis.call('ZREM', key, old) end
redis.call('ZADD', key, string.format('%d', now), id)
redis.call('PEXPIRE', key, ttl)
return redis.call('ZCARD', key)
