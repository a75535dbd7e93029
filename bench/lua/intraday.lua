-- intraday.lua: /v1/intraday cache misses, one symbol and one day in 1hour
-- buckets. Every request is a distinct query: a symbol of the data file and
-- a day, so that no (symbol, day) repeats within #symbols x #days requests.
--   wrk ... -s intraday.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY
-- DATAFILE lines: "sym<TAB>SYMBOL" and "day<TAB>YYYY-MM-DD".
dofile("common.lua")

miss_workload("sym", "/v1/intraday", function(g, syms, days)
  -- The harness keeps #syms and #days coprime, so #syms x #days requests
  -- in a row are distinct (Chinese remainders), and the symbol and the day
  -- both change on every request, spread like pgbench's random picks.
  local d = days[g % #days + 1]
  return "symbols=" .. syms[g % #syms + 1] .. "&interval=1hour&date_from=" .. d .. "&date_to=" .. d
end)
