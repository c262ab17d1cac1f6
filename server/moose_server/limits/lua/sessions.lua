-- The bot sessions of one client address, counted per server process, so that
-- a process that dies takes its count with it: each process renews a lease on
-- its count (quotas.py, every few seconds), and a lapsed lease is dropped here.
--
-- KEYS: 1 the address' sessions (keys.sessions_key): hash, <process> -> count,
--       <process>@ -> when its lease ends (Redis ms)
-- ARGV: 1 'enter' (one more, if the address holds fewer than ARGV[3]), 'leave'
--       (one fewer), 'renew' (the lease of this process' count);
--       2 process id, 3 limit, 4 lease ms
-- Returns the address' sessions after, or -1 when 'enter' found the limit reached.
if redis.replicate_commands then redis.replicate_commands() end -- TIME before writes on 6.2
local key, op, proc, limit, lease = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = 0
local flat = redis.call('HGETALL', key)
for i = 1, #flat, 2 do
  local field = flat[i]
  if string.sub(field, -1) ~= '@' then
    local ends = tonumber(redis.call('HGET', key, field .. '@') or '0')
    if ends <= now then
      redis.call('HDEL', key, field, field .. '@')
    else
      total = total + tonumber(flat[i + 1])
    end
  end
end
local mine = tonumber(redis.call('HGET', key, proc) or '0')
if op == 'enter' then
  if total >= limit then return -1 end
  mine, total = mine + 1, total + 1
elseif op == 'leave' and mine > 0 then
  mine, total = mine - 1, total - 1
end
if mine > 0 then
  redis.call('HSET', key, proc, mine, proc .. '@', string.format('%d', now + lease))
  redis.call('PEXPIRE', key, lease * 2)
else
  redis.call('HDEL', key, proc, proc .. '@')
end
return total
