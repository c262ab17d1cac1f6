-- A player claims their name as an account: unique by the name's look-alike key.
-- KEYS: 1 names hash (key -> player), 2 the player's profile, 3 their history,
--       4 guests sorted set
-- ARGV: 1 name key, 2 player, 3 name, 4 password hash, 5 bot ('1'/'0'), 6 now ms
-- Returns the account's token generation, or an error string: 'name_taken',
-- 'already_registered'. Running it again for the same player and name is harmless
-- until the password is set, and then answers 'already_registered'.
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner and owner ~= ARGV[2] then return 'name_taken' end
if redis.call('HEXISTS', KEYS[2], 'pw') == 1 then return 'already_registered' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], 'name', ARGV[3], 'pw', ARGV[4], 'gen', 1, 'bot', ARGV[5],
  'since', ARGV[6])
redis.call('PERSIST', KEYS[2])
redis.call('PERSIST', KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1
