module github.com/tickerdesk/tickerdesk/tools/reaper

go 1.26.0
