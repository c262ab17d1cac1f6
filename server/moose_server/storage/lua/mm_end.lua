-- Epilogue of every mm_*.lua script that changes state: answer a re-sent call
-- from memory, else run main() once and remember its reply under the nonce.
local done = redis.call('HGET', K_DONE, NONCE)
if done then return done end
local reply = main()
if not REMEMBER then return reply end
local t = now_us()
redis.call('HSET', K_DONE, NONCE, reply)
redis.call('ZADD', K_DONE_AT, int(t), NONCE)
local old = redis.call('ZRANGEBYSCORE', K_DONE_AT, '-inf', int(t - DONE_KEEP_US), 'LIMIT', 0, 100)
for _, n in ipairs(old) do
  redis.call('HDEL', K_DONE, n)
  redis.call('ZREM', K_DONE_AT, n)
end
return reply
