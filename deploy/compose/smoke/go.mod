module github.com/tickerdesk/tickerdesk/deploy/compose/smoke

go 1.26.0

require github.com/tickerdesk/tickerdesk/clients v0.0.0

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oapi-codegen/runtime v1.8.0 // indirect
)

replace github.com/tickerdesk/tickerdesk/clients => ../../../clients
