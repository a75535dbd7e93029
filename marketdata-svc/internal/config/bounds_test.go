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
	envconfigtest.Check(t, Prefix, map[string]string{"MARKETDATA_DATABASE_URL": "postgres://db/m"}, Load, append(envconfigtest.ServiceSettings(), []envconfigtest.Setting{
		{Var: "DATABASE_REPLICA_WAIT", Field: "ReplicaWait", OK: "5s"},
		{Var: "DATABASE_REPLICA_READ_TIMEOUT", Field: "ReplicaReadTimeout", OK: "300ms"},
		{Var: "STATEMENT_TIMEOUT", Field: "StatementTimeout", OK: "3s"},
		{Var: "DB_MAX_OPEN_CONNS", Field: "DBMaxOpenConns", OK: "30"},
		{Var: "DB_MAX_IDLE_CONNS", Field: "DBMaxIdleConns", OK: "10"},
		{Var: "DB_CONN_MAX_LIFETIME", Field: "DBConnMaxLifetime", OK: "1h"},
		{Var: "DB_CONN_MAX_IDLE_TIME", Field: "DBConnMaxIdleTime", OK: "10m"},
		{Var: "CACHE_TTL", Field: "CacheTTL", OK: "2m"},
		{Var: "CACHE_TIMEOUT", Field: "CacheTimeout", OK: "80ms"},
		{Var: "LOCAL_CACHE_SIZE", Field: "LocalCacheSize", OK: "500"},
		{Var: "CACHE_MAX_ENTRY_BYTES", Field: "CacheMaxEntryBytes", OK: "65536"},
		{Var: "DATA_VERSION_POLL", Field: "DataVersionPoll", OK: "1s"},
	}...))
}
