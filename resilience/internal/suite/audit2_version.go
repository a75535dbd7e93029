package suite

import "context"

// AuditVersionMonotonic checks that a replica never serves data older than it has served.
func AuditVersionMonotonic(ctx context.Context, e *Env) {}
