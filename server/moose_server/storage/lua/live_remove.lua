-- Forget games of the index of live games (they ended or expired).
--
-- KEYS: 1 games sorted set, 2 summaries hash
-- ARGV: the game ids
redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
return #ARGV
