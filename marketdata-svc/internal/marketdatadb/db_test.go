package marketdatadb_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	cfg := testenv.Config("postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	_, err := marketdatadb.Open(context.Background(), cfg)
	if !errors.Is(err, marketdata.ErrUnavailable) {
		t.Fatalf("open on a closed port: %v, want ErrUnavailable", err)
	}
	if strings.Contains(fmt.Sprint(err), "password") {
		t.Fatal("error leaks connection details")
	}
}
