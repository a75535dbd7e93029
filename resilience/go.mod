module github.com/tickerdesk/tickerdesk/resilience

go 1.26.0
