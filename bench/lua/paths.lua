-- paths.lua: a list of distinct requests, walked in order (the scale
-- workloads), or drawn through an order file (scale_hit: page numbers in a
-- Zipf distribution).
--   wrk ... -s paths.lua URL -- DATAFILE NTHREADS OFFSET ACCESS_KEY [ORDERFILE]
-- DATAFILE lines: a path with its query ("/v1/eod?symbols=A&limit=100");
-- ORDERFILE lines: 0-based line numbers of DATAFILE.
dofile("common.lua")

local paths, order, key, nthreads, offset

function init(args)
  paths = {}
  for _, f in ipairs(lines(args[1])) do table.insert(paths, f[1]) end
  nthreads, offset, key = tonumber(args[2]), tonumber(args[3]), args[4]
  if args[5] then
    order = {}
    for _, f in ipairs(lines(args[5])) do table.insert(order, tonumber(f[1]) + 1) end
  end
end

function request()
  local g = seq(nthreads, offset)
  local p
  if order then
    p = paths[order[g % #order + 1]]
  else
    p = paths[g % #paths + 1]
  end
  return wrk.format("GET", p .. "&access_key=" .. key)
end
