-- eod_miss.lua: /v1/eod cache misses. Every request is a distinct query:
-- one of the symbol pairs of the data file and a date_to, walked so that no
-- (pair, date_to) repeats within 100 x #dates requests.
--   wrk ... -s eod_miss.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY
-- DATAFILE lines: "pair<TAB>A,B" and "date<TAB>YYYY-MM-DD".
dofile("common.lua")

local pairs_, dates, key, next_seq

function init(args)
  pairs_, dates, key, next_seq = miss_args(args, "pair")
end

function request()
  local g = next_seq()
  local p = pairs_[g % #pairs_ + 1]
  -- 7919 is prime and coprime to the number of dates the harness writes,
  -- so the walk visits every date once per pair before repeating.
  local d = dates[(math.floor(g / #pairs_) * 7919) % #dates + 1]
  return wrk.format("GET", "/v1/eod?access_key=" .. key .. "&symbols=" .. p .. "&date_to=" .. d .. "&limit=100")
end
