-- Commit one step of a game: version check, idempotent move id, new state,
-- events appended to the game's stream, deadline set or cleared, wake-up.
--
-- KEYS: 1 game hash, 2 events stream, 3 deadlines sorted set (one bucket),
--       4 the bucket's unrated games (sorted set), 5 the game's kept record,
--       6 a finished game's move ids (hash: move-id field -> seq of its first event)
-- ARGV: 1 expected version, 2 move-id field ('' = none), 3 game data blob,
--       4 deadline: ms from now (> 0), 0 = clear, -1 = keep,
--       5 game id, 6 the wake-up channel of a game nobody follows (field 'w'
--       unset), 7 ttl seconds (0 = the game goes on),
--       8 grace ms: a finished game's stream and move ids are kept this long,
--       9 the record of a rated game that ends here, to keep ('' = none),
--       10 its ttl seconds (0: no game ends here by the rules), 11 event count,
--       12 a timeout's deadline: the game's must still be it (0: no check),
--       13 the committing instance's own wake-up channel ('' = none),
--       14 the prefix of the game's sharded step channels ('' = wake-ups only),
--       15 the step: msgpack [event, state, ...], every event with the state after it,
--       16 compact ('1': the game now waits days for a person's move, see below),
--       17 a channel listed as the game's follower when none is ('' = none): the
--          dealing instance's, whose sockets play the game, written with its start
--          instead of by a follow.lua call of its own,
--       18 Redis' time now as the committing instance tells it from the bucket's
--          last deadline claim and its own clock (ms; 0: this script reads TIME),
--       then per event: event blob, state snapshot blob ('' = none kept),
--       auto ('1': the server plays the seat to act after this event)
-- The wake-up goes to every instance that follows the game (its field 'w',
-- written by follow.lua, or first by this script: ARGV[17]) but the committing
-- one, whose hub has the events already; to ARGV[6] while no instance follows it. Given a step, the wake-up of
-- a follower that hears steps (its channel ends in ':s', keys.STEPS_MARK) is the
-- step itself, on its sharded channel (ARGV[14] .. its wake-up channel): "<game id> <first seq> <now ms> <deadline ms> <step length> " then the
-- step and the game data written (ARGV[3]), so that it need neither read the
-- stream nor the game. Published in this script, it goes out with the
-- commit or not at all; the stream stays the record for what a follower missed.
-- A game's end by the rules also puts it among the bucket's unrated games, in
-- this same step: whoever rates it (or lists it in its players' histories) takes
-- it out, and should that instance die first, another one finds it there
-- (results.py).
-- Returns {status, seq, now_ms, deadline_ms}; status is ok, dup or stale.
local game, events, deadlines, ledger = KEYS[1], KEYS[2], KEYS[3], KEYS[6]
-- A move id's field ('m:...', keys.move_field) holds the seq of its step's first
-- event: in the game hash while the game goes on (read and written with the
-- state, no command of its own), in the ledger (KEYS[6]) for the grace after.
local mid = ARGV[2]
-- 'held': until when the game's deadlines wait (defer.lua), its seats told that
-- Redis lost their last writes and answering the game as it is now.
local got = redis.call('HMGET', game, 'v', 'held', 'dl', 'w', mid ~= '' and mid or 'v')
local version = tonumber(got[1] or '0')
if mid ~= '' then
  local seen = got[5]
  if not seen and got[3] == '0' then -- over: its move ids are in the ledger
    seen = redis.call('HGET', ledger, mid)
  end
  if seen then
    return {'dup', tonumber(seen), 0, 0}
  end
end
-- A timeout fires for the deadline it was claimed for: one held meanwhile (the
-- players were told that Redis lost their last writes: defer.lua) waits.
local due = tonumber(ARGV[12])
if version ~= tonumber(ARGV[1]) or (due > 0 and tonumber(got[3] or '0') ~= due) then
  return {'stale', version, 0, 0}
end
local followers = got[4]
local listed = nil
if not followers and ARGV[17] ~= '' then
  followers, listed = ARGV[17], ARGV[17]
end
local now = tonumber(ARGV[18])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local delta = tonumber(ARGV[4])
local gid = ARGV[5]
local deadline = 0
if delta > 0 then
  deadline = math.max(now + delta, tonumber(got[2] or '0'))
  redis.call('ZADD', deadlines, string.format('%d', deadline), gid)
elseif delta == 0 then
  redis.call('ZREM', deadlines, gid)
else
  deadline = tonumber(got[3] or '0')
end
local count = tonumber(ARGV[11])
local seq = version
local first = version + 1
local d, now_s = string.format('%d', deadline), string.format('%d', now)
for i = 1, count do
  seq = seq + 1
  local id, e, s = string.format('%d-0', seq), ARGV[16 + 3 * i], ARGV[17 + 3 * i]
  local auto = ARGV[18 + 3 * i]
  if s == '' then
    redis.call('XADD', events, id, 'e', e, 'a', auto, 'd', d, 't', now_s)
  else
    redis.call('XADD', events, id, 'e', e, 'a', auto, 'd', d, 't', now_s, 's', s)
  end
end
if ARGV[16] == '1' then
  -- A stream's newest node keeps room for up to 4 KB of entries to come (the
  -- bundled Valkey 9 does): a third of what a correspondence game holds while it
  -- waits days for a move. Written anew from its DUMP, it holds its entries only.
  redis.call('RESTORE', events, 0, redis.call('DUMP', events), 'REPLACE')
end
local fields = {'v', seq, 'data', ARGV[3], 'dl', d}
if mid ~= '' then
  fields[#fields + 1], fields[#fields + 2] = mid, first
end
if listed then
  fields[#fields + 1], fields[#fields + 2] = 'w', listed
end
redis.call('HSET', game, unpack(fields))
local ttl = tonumber(ARGV[7])
if ttl > 0 then
  -- Over: the game stays for its record; the events and move ids only for late
  -- syncs and resends, for the grace: the move ids go to the ledger.
  -- The hash is written anew without them: one that only lost its fields may
  -- keep the room they took (+530 bytes a finished game in the lobby ladder).
  local grace = math.max(1, tonumber(ARGV[8]))
  local all = redis.call('HGETALL', game) -- field, value, field, value, ...
  local moved, kept = {}, {}
  for i = 1, #all, 2 do
    local into = kept
    if string.sub(all[i], 1, 2) == 'm:' then into = moved end
    into[#into + 1] = all[i]
    into[#into + 1] = all[i + 1]
  end
  if #moved > 0 then
    redis.call('HSET', ledger, unpack(moved))
    redis.call('PEXPIRE', ledger, grace)
    redis.call('DEL', game)
    redis.call('HSET', game, unpack(kept))
  end
  redis.call('EXPIRE', game, ttl)
  redis.call('PEXPIRE', events, grace)
end
if tonumber(ARGV[10]) > 0 then -- a game ends here by the rules
  if ARGV[9] ~= '' then redis.call('SET', KEYS[5], ARGV[9], 'EX', ARGV[10]) end
  redis.call('ZADD', KEYS[4], now, gid)
end
local wake = gid .. ' ' .. seq
if followers then
  local own, steps, step = ARGV[13], ARGV[14], nil
  for channel in string.gmatch(followers, '%S+') do
    if channel == own then -- its hub has the events
    elseif steps ~= '' and string.sub(channel, -2) == ':s' then
      step = step or table.concat({gid, first, now_s, d, #ARGV[15], ARGV[15] .. ARGV[3]}, ' ')
      redis.call('SPUBLISH', steps .. channel, step)
    else
      redis.call('PUBLISH', channel, wake)
    end
  end
else
  redis.call('PUBLISH', ARGV[6], wake)
end
return {'ok', first, now, deadline}
