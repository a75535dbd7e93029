-- intraday.lua: /v1/intraday cache misses, one symbol and one day in 1hour
-- buckets. Every request is a distinct query: a symbol of the data file and
-- a day, so that no (symbol, day) repeats within #symbols x #days requests.
--   wrk ... -s intraday.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY
-- DATAFILE lines: "sym<TAB>SYMBOL" and "day<TAB>YYYY-MM-DD".
dofile("common.lua")

local syms, days, key, next_seq

function init(args)
  syms, days, key, next_seq = miss_args(args, "sym")
end

function request()
  local g = next_seq()
  -- The harness keeps #syms and #days coprime, so #syms x #days requests
  -- in a row are distinct (Chinese remainders), and the symbol and the day
  -- both change on every request, spread like pgbench's random picks.
  local s = syms[g % #syms + 1]
  local d = days[g % #days + 1]
  return wrk.format("GET", "/v1/intraday?access_key=" .. key .. "&symbols=" .. s ..
    "&interval=1hour&date_from=" .. d .. "&date_to=" .. d)
end
