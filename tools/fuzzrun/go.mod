module github.com/tickerdesk/tickerdesk/tools/fuzzrun

go 1.26.0

require github.com/tickerdesk/tickerdesk/pkg v0.0.0

replace github.com/tickerdesk/tickerdesk/pkg => ../../pkg
