-- Create an arena unless one of that id exists (a recurring arena's id is made
-- from its occurrence, so every instance may try: one wins).
-- KEYS: keys.ArenaKeys in order (arena_lib.lua names them). ARGV: 1 id, 2 name, 3 for (bots|people|all),
-- 4 min players, 5 max players, 6 start (ms; 0 = now), 7 duration ms, 8 rated
-- ('1'/'0'), 9 created by. Returns JSON {created} or {exists}.
if redis.call('EXISTS', K_ARENA) == 1 then
  return cjson.encode({exists = true})
end
local now = now_ms()
local start = tonumber(ARGV[6])
if start <= 0 then start = now end
local stop = start + tonumber(ARGV[7])
redis.call('HSET', K_ARENA, 'id', ARENA, 'name', ARGV[2], 'for', ARGV[3], 'min', ARGV[4],
  'max', ARGV[5], 'start', string.format('%d', start), 'end', string.format('%d', stop),
  'rated', ARGV[8], 'by', ARGV[9], 'status', 'open', 'ver', 0, 'running', 0)
redis.call('ZADD', K_ARENAS, string.format('%d', stop), ARENA)
return cjson.encode({created = true})
