package reads

// SQL of the EOD reads, exported to the plan test.
var (
	EODSymbolsSQL = eodSymbolsSQL
	EODPageDesc   = eodPageDesc
	EODLatestDesc = eodLatestDesc
)
