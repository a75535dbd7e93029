package suite

import "context"

// Audit runs the regression scenarios for the defects an outside audit found
// (issue 12). Each scenario reproduces its defect the way the audit did and
// widens it to the class of input the defect belongs to; before the fixes
// each failed, and RELIABILITY.md lists the figures after them.
func Audit(ctx context.Context, e *Env) {
	for _, scenario := range []func(context.Context, *Env){
		// One line per audit item, in the order of the issue.
		AuditMetricLabels,
		AuditStalledListings,   // item 2: one tenant can take the whole notes connection pool
		AuditConcurrentImports, // item 4
		AuditConcurrentMigrate, // item 6
	} {
		if ctx.Err() != nil {
			return
		}
		scenario(ctx, e)
	}
}
