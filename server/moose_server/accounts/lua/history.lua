-- Put a finished game that changes no rating of these players in their
-- histories, once whoever runs it and however often.
--
-- KEYS: 1 the game's "listed" marker, then per player: profile hash, history list
-- ARGV: 1 marker ttl s, 2 history size, 3 guest ttl ms, 4 player count,
--       then per player: history entry (JSON)
-- A guest's history (no password in their profile) is forgotten guest_ttl
-- after their last game, as rate.lua does for a rated one.
-- Returns 'ok', or 'dup' when the game was listed before.
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  return 'dup'
end
local size, guest_ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 1, tonumber(ARGV[4]) do
  local profile, history = KEYS[2 * i], KEYS[2 * i + 1]
  if redis.call('LPUSH', history, ARGV[4 + i]) > size then
    redis.call('LTRIM', history, 0, size - 1)
  end
  if redis.call('HEXISTS', profile, 'pw') == 0 then
    redis.call('PEXPIRE', history, guest_ttl)
  end
end
return 'ok'
