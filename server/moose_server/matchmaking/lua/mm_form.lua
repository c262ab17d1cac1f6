-- Form the tables the queue allows now, at most `most`, and remove the seated tickets.
-- ARGV: nonce, match_wait_us, bots_after_us (0 = never), scan (oldest tickets looked at),
--       lease_us, window (rating points), widen (rating points a second of waiting),
--       most (new tables at most: bounds how long one call holds Redis; the caller
--       calls again at once when a call formed that many).
-- Reply: a JSON list of [key, {"q": [bot seats, player, name, player, name, ...],
-- "f": [players who asked for a fair deal] (only if any), "p": {player: the
-- profile fields its ticket carries} (only if any), "s": 1 (every seat's ticket
-- is held by an instance that reads its `match` in one message for the table:
-- Store.publish_seats)}] for each new table,
-- and [key, entry] for each table formed earlier whose game was not dealt within
-- its lease (its dealer died, or Redis failed it): dealing it again under the same
-- key is harmless, the game id comes from the key.
--
-- Tickets are visited oldest first; each still waiting gets the best table it can now:
--  * younger than match_wait: only a full table at its own maximum k, with the k-1
--    others nearest in rating whose maximum is also k (nobody in it could hope for a
--    bigger table), each within both tickets' rating window: `window` points at
--    first, `widen` points more for each second a ticket has waited;
--  * waited match_wait: the largest k in its range that k waiting tickets accept,
--    with the k-1 of them nearest in rating, however far;
--  * waited bots_after and still alone: a table of its minimum, the seats nobody
--    waiting can take filled with bots; so too, at once, a ticket whose player asked
--    for bots (mm_bots.lua), at the size they asked for.
-- So a rating never makes anyone wait longer than match_wait. Per size k, acc[k]
-- lists the tickets accepting k and top[k] those whose maximum is k, sorted by
-- rating; cnt/ctop count the unseated ones. A call costs a sort of each list and,
-- per ticket, a walk outwards from its place over the tickets within its window.
local function main()
  local wait, bots_after, scan = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  local lease, most = tonumber(ARGV[5]), tonumber(ARGV[8]) or math.huge
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

  local lo, hi, name, tk, r = {}, {}, {}, {}, {}
  local acc, top, cnt, ctop = {}, {}, {}, {}
  for k = 2, 6 do
    acc[k], top[k], cnt[k], ctop[k] = {}, {}, 0, 0
  end
  for i = 1, n do
    if raw[i] then
      local t = cjson.decode(raw[i])
      lo[i], hi[i], name[i], tk[i] = t.min, t.max, t.name, t
      r[i] = math.max(0, math.min(1000000, math.floor(tonumber(t.r) or 1500)))
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

  -- Each list sorted by rating (then queue order), and where each ticket sits in it.
  local function by_rating(list)
    local keys = {}
    for p, i in ipairs(list) do keys[p] = r[i] * 65536 + i end
    table.sort(keys)
    local sorted, at = {}, {}
    for p, key in ipairs(keys) do
      local i = key % 65536
      sorted[p], at[i] = i, p
    end
    return {sorted = sorted, at = at, up = {}, down = {}}
  end
  local sacc, stop = {}, {}
  for k = 2, 6 do
    sacc[k], stop[k] = by_rating(acc[k]), by_rating(top[k])
  end

  -- No window given: ratings do not matter (the nearest are still preferred).
  local window, widen = tonumber(ARGV[6]) or math.huge, (tonumber(ARGV[7]) or 0) / 1000000
  local function reach(i)
    return window + widen * age[i]
  end
  local seated = {}
  local function take(i)
    seated[i] = true
    for k = lo[i], hi[i] do cnt[k] = cnt[k] - 1 end
    ctop[hi[i]] = ctop[hi[i]] - 1
  end
  -- The first unseated place from p going by step (+1 or -1) in a sorted list, or 0 /
  -- #sorted + 1. Runs of seated places are jumped over and remembered (path halving), so
  -- the walks of one call do not cross the same seated tickets again and again.
  local function free(list, p, step)
    local sorted, jump = list.sorted, step > 0 and list.up or list.down
    local start = p
    while p >= 1 and p <= #sorted and seated[sorted[p]] do
      p = jump[p] or p + step
    end
    while start ~= p and start >= 1 and start <= #sorted do
      local next_p = jump[start] or start + step
      jump[start] = p
      start = next_p
    end
    return p
  end
  -- Up to m unseated tickets of `list` nearest in rating to ticket i (which is in it),
  -- each within both windows when `windowed`; nearest first.
  local function nearest(list, i, m, windowed)
    local sorted, out = list.sorted, {}
    local lo_p, hi_p = list.at[i] - 1, list.at[i] + 1
    local limit = windowed and reach(i) or math.huge
    while #out < m do
      lo_p, hi_p = free(list, lo_p, -1), free(list, hi_p, 1)
      local dl = lo_p >= 1 and r[i] - r[sorted[lo_p]] or math.huge
      local dh = hi_p <= #sorted and r[sorted[hi_p]] - r[i] or math.huge
      local d, j = dl, sorted[lo_p]
      if dh < dl then d, j = dh, sorted[hi_p] end
      if d == math.huge or d > limit then break end
      if dh < dl then hi_p = hi_p + 1 else lo_p = lo_p - 1 end
      if not windowed or d <= reach(j) then out[#out + 1] = j end
    end
    return out
  end

  -- The seated tickets leave the queue together at the end: one ZREM, one HDEL and
  -- one HINCRBY per size and per instance, where each ticket took four.
  local gone, by_max, by_inst = {}, {}, {}
  local function drop_later(player, t)
    gone[#gone + 1] = player
    by_max[t.max] = (by_max[t.max] or 0) + 1
    if type(t.inst) == 'string' and t.inst ~= '' then
      by_inst[t.inst] = (by_inst[t.inst] or 0) + 1
    end
  end
  local function drop_gone()
    for s = 1, #gone, 500 do -- unpack() has a stack limit
      local last = math.min(s + 499, #gone)
      redis.call('ZREM', K_QUEUE, unpack(gone, s, last))
      redis.call('HDEL', K_TICKETS, unpack(gone, s, last))
    end
    for max, by in pairs(by_max) do redis.call('HINCRBY', K_COUNTS, max, -by) end
    for inst, by in pairs(by_inst) do count_ticket(inst, -by) end
  end

  local function form(members, bots)
    table.sort(members) -- seats in queue order: oldest first
    local row, fair, known, seats = {bots}, {}, nil, true
    for _, j in ipairs(members) do
      take(j)
      row[#row + 1] = ids[j]
      row[#row + 1] = name[j]
      if tk[j].fair then fair[#fair + 1] = ids[j] end -- asked for a fair deal
      if type(tk[j].p) == 'table' then -- the profile fields the game's start takes
        known = known or {}
        known[ids[j]] = tk[j].p
      end
      -- Taken by an instance that reads one message for a table's seats, and held by
      -- it still (a version before moves a ticket without this mark: 's' ~= 'inst').
      if type(tk[j].s) ~= 'string' or tk[j].s ~= tk[j].inst then seats = false end
      drop_later(ids[j], tk[j])
    end
    local entry = {q = row}
    if #fair > 0 then entry.f = fair end
    if known then entry.p = known end
    if seats then entry.s = 1 end
    out[#out + 1] = starting(NONCE .. ':' .. (#out + 1), cjson.encode(entry), now, lease)
  end

  local made = 0
  for i = 1, n do
    if made >= most then break end
    if lo[i] and not seated[i] then
      local members
      if age[i] >= wait then
        for k = hi[i], lo[i], -1 do
          if cnt[k] >= k then
            members = nearest(sacc[k], i, k - 1, false)
            break
          end
        end
      elseif ctop[hi[i]] >= hi[i] then
        members = nearest(stop[hi[i]], i, hi[i] - 1, true)
        if #members < hi[i] - 1 then members = nil end
      end
      if members then
        members[#members + 1] = i
        form(members, 0)
        made = made + 1
      elseif tk[i].bots or (bots_after > 0 and age[i] >= bots_after) then
        local k = tonumber(tk[i].bots) or lo[i]
        members = nearest(sacc[k], i, math.min(k - 1, cnt[k] - 1), false)
        members[#members + 1] = i
        form(members, k - #members)
        made = made + 1
      end
    end
  end
  drop_gone()
  if #out == 0 then
    REMEMBER = false
    return '[]'
  end
  return '[' .. table.concat(out, ',') .. ']'
end
