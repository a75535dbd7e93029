module github.com/tickerdesk/tickerdesk/tools/fuzzrun

go 1.26.0
