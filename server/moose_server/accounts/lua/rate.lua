-- Apply one finished game's rating changes, once whoever runs it and however often.
--
-- KEYS: 1 the game's "rated" marker, 2 humans' leaderboard, 3 bots' leaderboard (of
--       the game's pool), 4 guests (player -> when their rating expires, ms),
--       5 humans' and 6 bots' leaderboard of the other pool, then per player:
--       profile hash, history list
-- ARGV: 1 marker ttl s, 2 history size, 3 guest ttl ms, 4 provisional games,
--       5 rating base, 6 scale, 7 base ordinal, 8 sigmas off mu (see ratings.display),
--       9 newcomer mu, 10 newcomer sigma, 11 player count, 12 the pool's field prefix
--       ('' real time, 'c' correspondence: mu, sigma, games, rating or cmu, ...),
--       then per player: player id, name, bot ('1'/'0'), mu delta, sigma ratio,
--       history entry (JSON)
-- A player's new mu is their current mu plus the game's change, their sigma the
-- current one times the game's ratio: exact when no other game of theirs was
-- rated meanwhile, and never losing the other game's change when one was.
-- A profile's `<f>on` ('h' or 'b') names the leaderboard of the pool it was last
-- put on: the other one is emptied of the player only when it is that one (or,
-- unwritten, once they had the games to be on one). A guest's `gx` is when their
-- rating expires (ms): renewed, with the keys' ttls and the guests' score, only
-- once less than guest_ttl less a 168th of it is left (an hour of 7 days).
-- Returns 'ok', or 'dup' when the game was rated before.
if redis.replicate_commands then redis.replicate_commands() end -- TIME before writes on 6.2
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  return 'dup'
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local size, guest_ttl, provisional = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local base, scale, ordinal, spread = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]),
  tonumber(ARGV[8])
local mu0, sigma0 = tonumber(ARGV[9]), tonumber(ARGV[10])
local f = ARGV[12]
for i = 1, tonumber(ARGV[11]) do
  local a = 12 + (i - 1) * 6
  local player, name, bot = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
  local profile, history = KEYS[5 + 2 * i], KEYS[6 + 2 * i]
  local got = redis.call('HMGET', profile, f .. 'mu', f .. 'sigma', f .. 'games', 'pw', 'gx',
    f .. 'on')
  local mu = (tonumber(got[1]) or mu0) + tonumber(ARGV[a + 4])
  local sigma = (tonumber(got[2]) or sigma0) * tonumber(ARGV[a + 5])
  local games = (tonumber(got[3]) or 0) + 1
  local rating = math.floor(base + scale * (mu - spread * sigma - ordinal) + 0.5)
  local top, other, kind = KEYS[2], KEYS[3], 'h'
  if bot == '1' then top, other, kind = KEYS[3], KEYS[2], 'b' end
  local fields = {f .. 'mu', string.format('%.17g', mu), f .. 'sigma',
    string.format('%.17g', sigma), f .. 'games', games, f .. 'rating', rating, 'name', name,
    'bot', bot}
  local on = got[6]
  if games >= provisional and on ~= kind then
    fields[#fields + 1], fields[#fields + 2] = f .. 'on', kind
  end
  local renew = false
  if not got[4] then -- a guest: forgotten guest_ttl after their last game
    renew = (tonumber(got[5]) or 0) < now + guest_ttl - math.floor(guest_ttl / 168)
    if renew then
      fields[#fields + 1], fields[#fields + 2] = 'gx', now + guest_ttl
    end
  end
  redis.call('HSET', profile, unpack(fields))
  -- Trimmed only once it is over its size: a history not full yet costs no LTRIM.
  local length = redis.call('LPUSH', history, ARGV[a + 6])
  if length > size then
    redis.call('LTRIM', history, 0, size - 1)
  end
  if games >= provisional then
    redis.call('ZADD', top, rating, player)
  end
  if (on and on ~= kind) or (not on and games > provisional) then
    redis.call('ZREM', other, player)
  end
  if renew then
    redis.call('PEXPIRE', profile, guest_ttl)
    redis.call('PEXPIRE', history, guest_ttl)
    redis.call('ZADD', KEYS[4], now + guest_ttl, player)
  elseif length == 1 and not got[4] then -- a new history: it expires with the profile
    redis.call('PEXPIRE', history, math.max(1, tonumber(got[5]) - now))
  end
end
-- Guests whose ratings expired leave the leaderboards of both pools, a few per game.
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 20)
for _, player in ipairs(gone) do
  redis.call('ZREM', KEYS[2], player)
  redis.call('ZREM', KEYS[3], player)
  redis.call('ZREM', KEYS[4], player)
  redis.call('ZREM', KEYS[5], player)
  redis.call('ZREM', KEYS[6], player)
end
return 'ok'
