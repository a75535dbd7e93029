-- intraday.lua: /v1/intraday cache misses, one symbol and one day in 1hour
-- buckets. Every request is a distinct query: a symbol of the data file and
-- a day, walked so that no (symbol, day) repeats within #symbols x #days
-- requests.
--   wrk ... -s intraday.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY
-- DATAFILE lines: "sym<TAB>SYMBOL" and "day<TAB>YYYY-MM-DD".
dofile("common.lua")

local syms, days, nthreads, offset, key

function init(args)
  syms, days = {}, {}
  for _, f in ipairs(lines(args[1])) do
    if f[1] == "sym" then table.insert(syms, f[2]) else table.insert(days, f[2]) end
  end
  nthreads, offset, key = tonumber(args[2]), tonumber(args[3]), args[4]
end

function request()
  local g = seq(nthreads, offset)
  local s = syms[g % #syms + 1]
  -- 7919 is prime and the harness keeps #days coprime to it, so the walk
  -- visits every day once per symbol before repeating.
  local d = days[(math.floor(g / #syms) * 7919) % #days + 1]
  return wrk.format("GET", "/v1/intraday?access_key=" .. key .. "&symbols=" .. s ..
    "&interval=1hour&date_from=" .. d .. "&date_to=" .. d)
end
