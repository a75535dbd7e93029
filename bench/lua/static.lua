-- static.lua: the same request every time (cache hits, tickers, and their
-- bare-Gin ceilings). No request() function, so wrk sends its prebuilt
-- request at full speed.
dofile("common.lua")
