package config

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/envconfig/envconfigtest"
)

// TestEverySettingBounded walks every duration and count of Config: each
// is listed here with its variable, and refuses 1ns, 1µs, 100h and
// negative values (and 0 where 0 does not mean off) with a message naming
// the variable. A new field without a bound fails here.
func TestEverySettingBounded(t *testing.T) {
	envconfigtest.Check(t, Prefix, map[string]string{"NOTES_DATABASE_URL": "postgres://db/notes"}, Load, append(envconfigtest.ServiceSettings(), []envconfigtest.Setting{
		{Var: "HTTP_READ_TIMEOUT", Field: "HTTPReadTimeout", OK: "20s"},
		{Var: "HTTP_READ_HEADER_TIMEOUT", Field: "HTTPReadHeaderTimeout", OK: "2s"},
		{Var: "HTTP_WRITE_TIMEOUT", Field: "HTTPWriteTimeout", OK: "30s"},
		{Var: "HTTP_IDLE_TIMEOUT", Field: "HTTPIdleTimeout", OK: "90s"},
		{Var: "HTTP_MAX_HEADER_BYTES", Field: "HTTPMaxHeaderBytes", OK: "8192"},
		{Var: "DB_MAX_OPEN_CONNS", Field: "DBMaxOpenConns", OK: "30"},
		{Var: "DB_MAX_IDLE_CONNS", Field: "DBMaxIdleConns", OK: "10"},
		{Var: "DB_CONN_MAX_LIFETIME", Field: "DBConnMaxLifetime", OK: "1h"},
		{Var: "DB_CONN_MAX_IDLE_TIME", Field: "DBConnMaxIdleTime", OK: "10m"},
		{Var: "DB_STATEMENT_TIMEOUT", Field: "DBStatementTimeout", OK: "3s"},
		{Var: "LIST_MAX_CONCURRENT", Field: "ListMaxConcurrent", OK: "4"},
		{Var: "LIST_MAX_PER_ACCOUNT", Field: "ListMaxPerAccount", OK: "1"},
		{Var: "LIST_WAIT", Field: "ListWait", OK: "500ms", Off: true},
		{Var: "LIST_BATCH_SIZE", Field: "ListBatchSize", OK: "200"},
		{Var: "KEY_CACHE_SIZE", Field: "KeyCacheSize", OK: "500"},
		{Var: "LAST_USED_FLUSH_INTERVAL", Field: "LastUsedFlushInterval", OK: "10s"},
		{Var: "GC_PERCENT", Field: "GCPercent", OK: "200"},
		{Var: "RATE_LIMIT_PER_SECOND", Field: "RateLimitPerSecond", OK: "20", Off: true},
	}...))
}
