module github.com/tickerdesk/tickerdesk/resilience

go 1.26.0

require (
	github.com/tickerdesk/tickerdesk/clients v0.0.0
	github.com/tickerdesk/tickerdesk/pkg v0.0.0
)

replace github.com/tickerdesk/tickerdesk/pkg => ../pkg

replace github.com/tickerdesk/tickerdesk/clients => ../clients
