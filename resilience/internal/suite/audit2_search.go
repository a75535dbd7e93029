package suite

import "context"

// AuditSearchCost checks that a negated or phrase search costs in proportion to the caller's own notes.
func AuditSearchCost(ctx context.Context, e *Env) {}
