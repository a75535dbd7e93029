package suite

import "context"

// AuditEdgeCases checks that the low-severity items.
func AuditEdgeCases(ctx context.Context, e *Env) {}
