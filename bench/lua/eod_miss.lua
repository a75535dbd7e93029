-- eod_miss.lua: /v1/eod cache misses. Every request is a distinct query:
-- one of the symbol pairs of the data file and a date_to, walked so that no
-- (pair, date_to) repeats within 100 x #dates requests.
--   wrk ... -s eod_miss.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY
-- DATAFILE lines: "pair<TAB>A,B" and "date<TAB>YYYY-MM-DD".
dofile("common.lua")

miss_workload("pair", "/v1/eod", function(g, pairs_, dates)
  -- 7919 is prime and coprime to the number of dates the harness writes,
  -- so the walk visits every date once per pair before repeating.
  local d = dates[(math.floor(g / #pairs_) * 7919) % #dates + 1]
  return "symbols=" .. pairs_[g % #pairs_ + 1] .. "&date_to=" .. d .. "&limit=100"
end)
