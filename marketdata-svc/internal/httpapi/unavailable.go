package httpapi

import "github.com/gin-gonic/gin"

// unavailableFunctions are marketstack v2's functions over datasets this
// service does not load, by path, with the dataset each needs. They are
// routed (not left to the 404 of an unknown path) so that a client reads
// marketstack's answer to a plan without the function.
var unavailableFunctions = [...]struct{ path, dataset string }{
	{"/cik_code", "SEC EDGAR filings"},
	{"/company_name", "SEC EDGAR filings"},
	{"/submissions", "SEC EDGAR filings"},
	{"/company_facts", "SEC EDGAR filings"},
	{"/concept/:concept", "SEC EDGAR filings"},
	{"/frames/:concept/:unit", "SEC EDGAR filings"},
}

// datasetMissing answers a function whose dataset is not loaded.
func (s *Server) datasetMissing(dataset string) gin.HandlerFunc {
	err := &datasetMissingError{dataset: dataset}
	return func(c *gin.Context) { s.writeError(c, err) }
}
