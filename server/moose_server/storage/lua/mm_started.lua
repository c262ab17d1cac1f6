-- The game of a formed table has been dealt: forget the table. ARGV: nonce, key.
local function main()
  REMEMBER = false -- running it twice is harmless
  redis.call('HDEL', K_STARTING, ARGV[2])
  redis.call('ZREM', K_STARTING_AT, ARGV[2])
  return '{}'
end
