-- An instance follows a game: its commits' wake-ups are published to the
-- instance's channel from now on (commit.lua reads the field 'w').
--
-- KEYS: 1 game hash
-- ARGV: 1 the instance's wake-up channel, 2 the channel every instance hears,
--       3 channels kept at most: past them, the game's wake-ups go to ARGV[2]
-- Returns the game's version now (-1: no such game), so that the instance reads
-- what was committed before its channel was listed.
local game = KEYS[1]
local got = redis.call('HMGET', game, 'v', 'w')
if not got[1] then
  return -1
end
local version = tonumber(got[1])
local followers = got[2] or ''
local count = 0
for channel in string.gmatch(followers, '%S+') do
  if channel == ARGV[1] or channel == ARGV[2] then
    return version
  end
  count = count + 1
end
if count >= tonumber(ARGV[3]) then
  followers = ARGV[2]
elseif followers == '' then
  followers = ARGV[1]
else
  followers = followers .. ' ' .. ARGV[1]
end
redis.call('HSET', game, 'w', followers)
return version
