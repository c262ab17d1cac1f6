-- Form every table the queue allows now, and remove the seated tickets.
-- ARGV: nonce, match_wait_us, bots_after_us (0 = never), scan (oldest tickets looked at),
--       lease_us.
-- Reply: a JSON list of [key, {"q": [bot seats, player, name, player, name, ...]}]
-- for each new table, and [key, entry] for each table formed earlier whose game
-- was not dealt within its lease (its dealer died, or Redis failed it): dealing
-- it again under the same key is harmless, the game id comes from the key.
--
-- Tickets are visited oldest first; each still waiting gets the best table it can now:
--  * waited match_wait: the largest k in its range that k waiting tickets accept,
--    with the oldest of them;
--  * younger: only a full table at its own maximum k, with k-1 others whose
--    maximum is also k (nobody in it could hope for a bigger table);
--  * waited bots_after and still alone: a table of its minimum, the seats nobody
--    waiting can take filled with bots.
-- Per size k, acc[k] lists the tickets accepting k and top[k] those whose maximum
-- is k, oldest first; cnt/ctop count the unseated ones and pa/pt skip the seated
-- head of each list, so a call costs O(scan * 5).
local function main()
  local wait, bots_after, scan = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local lease = tonumber(ARGV[5])
  local now = now_us()
  local out = {}
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', K_STARTING_AT, '-inf', int(now), 'LIMIT', 0, 50)) do
    local entry = redis.call('HGET', K_STARTING, key)
    if entry then
      out[#out + 1] = starting(key, entry, now, lease)
    else
      redis.call('ZREM', K_STARTING_AT, key)
    end
  end
  local rows = redis.call('ZRANGE', K_QUEUE, 0, scan - 1, 'WITHSCORES')
  local n = #rows / 2
  if n == 0 and #out == 0 then
    REMEMBER = false
    return '[]'
  end
  local ids, age = {}, {}
  for i = 1, n do
    ids[i] = rows[2 * i - 1]
    age[i] = now - tonumber(rows[2 * i])
  end
  local raw = {}
  for s = 1, n, 500 do -- unpack() has a stack limit
    local part = redis.call('HMGET', K_TICKETS, unpack(ids, s, math.min(s + 499, n)))
    for j = 1, #part do raw[s + j - 1] = part[j] end
  end

  local lo, hi, name, tk = {}, {}, {}, {}
  local acc, top, cnt, ctop, pa, pt = {}, {}, {}, {}, {}, {}
  for k = 2, 6 do
    acc[k], top[k], cnt[k], ctop[k], pa[k], pt[k] = {}, {}, 0, 0, 1, 1
  end
  for i = 1, n do
    if raw[i] then
      local t = cjson.decode(raw[i])
      lo[i], hi[i], name[i], tk[i] = t.min, t.max, t.name, t
      for k = lo[i], hi[i] do
        acc[k][#acc[k] + 1] = i
        cnt[k] = cnt[k] + 1
      end
      top[hi[i]][#top[hi[i]] + 1] = i
      ctop[hi[i]] = ctop[hi[i]] + 1
    else
      redis.call('ZREM', K_QUEUE, ids[i]) -- heal a queue entry without a ticket
    end
  end

  local seated = {}
  local function take(i)
    seated[i] = true
    for k = lo[i], hi[i] do cnt[k] = cnt[k] - 1 end
    ctop[hi[i]] = ctop[hi[i]] - 1
  end
  -- Seat the m oldest unseated tickets of lists[k]; callers checked there are m.
  local function pick(lists, ptr, k, m, members)
    local list, p = lists[k], ptr[k]
    while m > 0 do
      local j = list[p]
      if not seated[j] then
        take(j)
        members[#members + 1] = j
        m = m - 1
      end
      p = p + 1
    end
    ptr[k] = p -- everything before p is seated now
  end

  local function form(members, bots)
    table.sort(members) -- seats in queue order: oldest first
    local row = {bots}
    for _, j in ipairs(members) do
      row[#row + 1] = ids[j]
      row[#row + 1] = name[j]
      drop_ticket(ids[j], tk[j])
    end
    out[#out + 1] = starting(NONCE .. ':' .. (#out + 1), cjson.encode({q = row}), now, lease)
  end

  for i = 1, n do
    if lo[i] and not seated[i] then
      local members
      if age[i] >= wait then
        for k = hi[i], lo[i], -1 do
          if cnt[k] >= k then
            take(i)
            members = {i}
            pick(acc, pa, k, k - 1, members)
            break
          end
        end
      elseif ctop[hi[i]] >= hi[i] then
        take(i)
        members = {i}
        pick(top, pt, hi[i], hi[i] - 1, members)
      end
      if members then
        form(members, 0)
      elseif bots_after > 0 and age[i] >= bots_after then
        local k = lo[i]
        take(i)
        members = {i}
        pick(acc, pa, k, math.min(k - 1, cnt[k]), members)
        form(members, k - #members)
      end
    end
  end
  if #out == 0 then
    REMEMBER = false
    return '[]'
  end
  return '[' .. table.concat(out, ',') .. ']'
end
