-- Keep one chat line and publish it, in one step: every instance hears a room's
-- lines in the order the stream holds them.
--
-- KEYS: 1 the room's chat stream, 2 whose lifetime it takes (a game's event
--       stream; a table's chat: the chat stream itself)
-- ARGV: 1 channel, 2 game id or table code, 3 room, 4 the line (msgpack map),
--       5 lines kept (the oldest are trimmed), 6 ttl ms while KEYS[2] has none
-- Returns the line's id (the stream entry id: "<ms>-<n>", increasing).
local chat, life = KEYS[1], KEYS[2]
local id = redis.call('XADD', chat, 'MAXLEN', ARGV[5], '*', 'l', ARGV[4])
local ttl = redis.call('PTTL', life)
if chat == life or ttl < 0 then
  ttl = tonumber(ARGV[6])
end
redis.call('PEXPIRE', chat, ttl)
-- "<target>\n<room>\n<id>\n<line>": none of the first three holds a newline
redis.call('PUBLISH', ARGV[1], ARGV[2] .. '\n' .. ARGV[3] .. '\n' .. id .. '\n' .. ARGV[4])
return id
