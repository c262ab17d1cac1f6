-- Read a private table. ARGV: nonce (unused), code.
local function main()
  local t = load_table(ARGV[2], now_us())
  if not t then return fail('bad_code') end
  return cjson.encode(t)
end
