package postgres

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

func TestOpenPoolSettings(t *testing.T) {
	var adjusted bool
	p, err := OpenPool("postgres://u:secret@db.invalid/app", PoolOptions{ApplicationName: "svc", MaxOpenConns: 7,
		ConnMaxLifetime: time.Hour, ConnMaxIdleTime: time.Minute, StatementTimeout: 2 * time.Second}, func(cfg *pgxpool.Config) {
		adjusted = cfg.ConnConfig.RuntimeParams["statement_timeout"] == "2000"
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg := p.PGX.Config()
	if cfg.MaxConns != 7 || cfg.MaxConnLifetime != time.Hour || cfg.MaxConnIdleTime != time.Minute || !adjusted ||
		cfg.ConnConfig.RuntimeParams["application_name"] != "svc" || cfg.ConnConfig.RuntimeParams["jit"] != "off" ||
		cfg.ConnConfig.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("pool settings lost: max %d, lifetime %v, idle %v, adjust saw the session settings: %v, params %v",
			cfg.MaxConns, cfg.MaxConnLifetime, cfg.MaxConnIdleTime, adjusted, cfg.ConnConfig.RuntimeParams)
	}
	// database/sql takes its connections from the pool and keeps none.
	if s := p.DB.Stats(); s.MaxOpenConnections != 0 || s.OpenConnections != 0 {
		t.Errorf("database/sql opened connections of its own: %+v", s)
	}
	_, err = OpenPool("postgres://u:hunter2@db.invalid:notaport/app", PoolOptions{}, nil)
	if !errors.Is(err, ErrInvalidURL) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a bad URL: err = %v, want ErrInvalidURL without the password", err)
	}
}

// TestPoolCollectorNames holds the pool's series to the names and labels
// client_golang gives database/sql's, which the dashboards and alerts
// read: a series either exports that the other lacks is named here.
func TestPoolCollectorNames(t *testing.T) {
	p, err := OpenPool("postgres://db.invalid/app", PoolOptions{MaxOpenConns: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	families := func(c prometheus.Collector) map[string]string {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, mf := range mfs {
			m := mf.GetMetric()[0]
			out[mf.GetName()] = mf.GetType().String() + " " + m.GetLabel()[0].GetName() + "=" + m.GetLabel()[0].GetValue()
		}
		return out
	}
	ours, theirs := families(NewPoolCollector(p.PGX, "notes")), families(collectors.NewDBStatsCollector(p.DB, "notes"))
	// pgxpool closes no connection for being one idle too many.
	delete(theirs, "go_sql_max_idle_closed_total")
	var diff []string
	for name, kind := range theirs {
		if ours[name] != kind {
			diff = append(diff, name+": "+ours[name]+", database/sql's "+kind)
		}
	}
	for name := range ours {
		if _, ok := theirs[name]; !ok {
			diff = append(diff, name+": not database/sql's")
		}
	}
	slices.Sort(diff)
	if len(diff) > 0 {
		t.Errorf("pool series differ from database/sql's:\n%s", strings.Join(diff, "\n"))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewPoolCollector(p.PGX, "notes"))
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "go_sql_max_open_connections" && mf.GetMetric()[0].GetGauge().GetValue() != 3 {
			t.Errorf("max open connections = %v, want the pool's 3", mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
}
