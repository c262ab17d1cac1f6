-- The games of formed tables have been dealt: forget the tables (those of one
-- round of matchmaking in one call). ARGV: nonce, key, more keys...
REPLAYABLE = true -- running it twice is harmless: no reply kept, none looked up
local function main()
  REMEMBER = false
  local keys = {ARGV[2]}
  for i = 3, #ARGV do keys[#keys + 1] = ARGV[i] end
  redis.call('HDEL', K_STARTING, unpack(keys))
  redis.call('ZREM', K_STARTING_AT, unpack(keys))
  return '{}'
end
