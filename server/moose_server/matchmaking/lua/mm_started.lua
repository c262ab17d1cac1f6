-- The game of a formed table has been dealt: forget the table. ARGV: nonce, key.
REPLAYABLE = true -- running it twice is harmless: no reply kept, none looked up
local function main()
  REMEMBER = false
  redis.call('HDEL', K_STARTING, ARGV[2])
  redis.call('ZREM', K_STARTING_AT, ARGV[2])
  return '{}'
end
