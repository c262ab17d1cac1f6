-- A login stores a stronger hash of the password it just verified, unless the
-- password changed meanwhile (the old hash is no longer there): then nothing.
-- KEYS: 1 the player's profile
-- ARGV: 1 the hash the login verified, 2 its replacement
-- Returns 1 when replaced, else 0.
if redis.call('HGET', KEYS[1], 'pw') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'pw', ARGV[2])
return 1
