module github.com/tickerdesk/tickerdesk/tools/docsbrowser

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.2
	github.com/chromedp/chromedp v0.23.0
	github.com/tickerdesk/tickerdesk/pkg v0.0.0
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect

replace github.com/tickerdesk/tickerdesk/pkg => ../../pkg
