package suite

import "context"

// AuditRound2 runs the regression scenarios for the defects a second
// outside audit found in the cache, the limiters, the replica router and
// the query paths. Each scenario reproduces its defect the way the audit
// did and widens it to the defect's class; before the fixes each failed.
// Items whose regression case is a Go test (it runs in `make test`) have
// no scenario here.
func AuditRound2(ctx context.Context, e *Env) {
	for _, scenario := range []func(context.Context, *Env){
		// In the order of the audit's items.
		AuditSearchCost,
		AuditUnboundedQueries,
		AuditLeaseReplies,
		AuditQuotaDurable,
		AuditVersionMonotonic,
		AuditEdgeCases,
	} {
		if ctx.Err() != nil {
			return
		}
		scenario(ctx, e)
	}
}
