-- The game of an arena table has been dealt: the table is not handed out again.
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 arena id, 2 table key.
redis.call('HDEL', K_PENDING, ARGV[2])
redis.call('ZREM', K_LEASES, ARGV[2])
return '{}'
