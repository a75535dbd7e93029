-- common.lua is loaded by every workload script (wrk runs with this
-- directory as its working directory). It numbers the threads, so each
-- request of a run gets a distinct global sequence number, and prints one
-- machine-readable summary line that the report generator parses.

local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- seq returns the global sequence number of the next request of this
-- thread: requests of thread t are t, t+n, t+2n, ... for n threads, plus
-- the offset given to the script (so a warm-up and the measured run never
-- send the same query).
local counter = 0
function seq(nthreads, offset)
  local g = offset + counter * nthreads + tid
  counter = counter + 1
  return g
end

-- lines reads a tab-separated file into a list of field lists.
function lines(path)
  local out = {}
  local f = assert(io.open(path, "r"))
  for line in f:lines() do
    if line ~= "" then
      local fields = {}
      for field in (line .. "\t"):gmatch("([^\t]*)\t") do table.insert(fields, field) end
      table.insert(out, fields)
    end
  end
  f:close()
  return out
end

-- miss_workload defines init and request for a cache-miss script, whose
-- arguments are DATAFILE NTHREADS OFFSET ACCESS_KEY, the DATAFILE's lines
-- "KIND<TAB>VALUE" of two kinds. Each request is GET path with the access
-- key and the rest of its query, query(g, a, b): g is the request's
-- sequence number (seq), a the values of kind first and b those of the
-- other kind, each in file order.
function miss_workload(first, path, query)
  local a, b, key, nthreads, offset
  function init(args)
    a, b = {}, {}
    for _, f in ipairs(lines(args[1])) do
      if f[1] == first then table.insert(a, f[2]) else table.insert(b, f[2]) end
    end
    nthreads, offset, key = tonumber(args[2]), tonumber(args[3]), args[4]
  end
  function request()
    return wrk.format("GET", path .. "?access_key=" .. key .. "&" .. query(seq(nthreads, offset), a, b))
  end
end

-- done prints the run's summary, with its latency percentiles at every
-- 0.1% (the "q" grid) so that the harness can merge the latencies of
-- several short runs (loadgen.Merge) into the percentiles of the whole.
function done(summary, latency, requests)
  local e = summary.errors
  local q = {}
  for i = 1, 999 do q[i] = string.format("%d", latency:percentile(i / 10)) end
  io.write(string.format(
    'BENCHJSON {"duration_us":%d,"requests":%d,"bytes":%d,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"latency_mean_us":%.1f,"latency_max_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d,"q":[%s]}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9),
    table.concat(q, ",")))
end
