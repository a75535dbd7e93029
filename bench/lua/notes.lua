-- notes.lua: notes API requests, each with the key of the account whose
-- note or list it asks for, accounts taken in turn.
--   wrk ... -s notes.lua URL -- DATAFILE NTHREADS MODE [ARG]
-- DATAFILE lines: "KEY<TAB>NOTE_ID<TAB>ACCOUNT_ID" (one per account). The
-- account id goes out as X-Account-ID, which only the minimal notes server
-- reads (notes-svc takes the account from the key), so both servers get
-- the same request bytes.
-- MODE: get (GET /v1/notes/{id}), list (GET /v1/notes?ARG),
--       post (POST /v1/notes with the JSON body in file ARG).
dofile("common.lua")

local rows, nthreads, mode, arg, body

function init(args)
  rows = lines(args[1])
  nthreads, mode, arg = tonumber(args[2]), args[3], args[4]
  if mode == "post" then
    local f = assert(io.open(arg, "r"))
    body = f:read("*a")
    f:close()
  end
end

function request()
  local r = rows[seq(nthreads, 0) % #rows + 1]
  local headers = { ["Authorization"] = "Bearer " .. r[1], ["X-Account-ID"] = r[3] }
  if mode == "get" then
    return wrk.format("GET", "/v1/notes/" .. r[2], headers)
  elseif mode == "list" then
    return wrk.format("GET", "/v1/notes?" .. arg, headers)
  end
  headers["Content-Type"] = "application/json"
  return wrk.format("POST", "/v1/notes", headers, body)
end
