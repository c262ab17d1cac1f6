-- Epilogue of every mm_*.lua script that changes state: answer a re-sent call
-- from memory, else run main() once and remember its reply under the nonce.
-- The reply is a key of its own that expires (keys.mm_done_key): no purge to run.
if not REPLAYABLE then
  local done = redis.call('GET', K_DONE)
  if done then return done end
end
local reply = main()
if REMEMBER then redis.call('SET', K_DONE, reply, 'PX', DONE_KEEP_MS) end
return reply
