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

-- miss_args reads the arguments every cache-miss script takes
-- (DATAFILE NTHREADS OFFSET ACCESS_KEY, the DATAFILE's lines
-- "KIND<TAB>VALUE" of two kinds): the values of kind first and those of
-- the other kind, each in file order, the access key, and a function
-- giving the sequence number of this thread's next request.
function miss_args(args, first)
  local a, b = {}, {}
  for _, f in ipairs(lines(args[1])) do
    if f[1] == first then table.insert(a, f[2]) else table.insert(b, f[2]) end
  end
  local nthreads, offset = tonumber(args[2]), tonumber(args[3])
  return a, b, args[4], function() return seq(nthreads, offset) end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"duration_us":%d,"requests":%d,"bytes":%d,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"latency_mean_us":%.1f,"latency_max_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
