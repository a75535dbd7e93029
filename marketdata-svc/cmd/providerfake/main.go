// Command providerfake serves the fakes of the data providers that
// `marketdata-svc sync` reads (internal/feed/feedfake) on one address, for
// `make sync-demo` and the sync benchmarks: marketstack under
// /marketstack/v2, Tiingo at /tiingo, EODHD under /eodhd, Stooq under
// /stooq. Its answers are written from each provider's documentation and
// hold synthetic prices only (symbols S00000..., or with --universe the
// first of them under the names `marketdata-svc generate --universe` gives
// its tickers with bars, so that a day updates a generated dataset).
// --split and --dividend add corporate actions. PUT /fake/bar restates a
// bar, as a provider's correction would.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/generate"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() { cmdmain.Run("providerfake", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("providerfake", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	token := fs.String("token", "demo-token", "the credential every keyed fake expects")
	synthetic := fs.Int("symbols", 10, "synthetic symbols S00000... with a bar every weekday")
	universe := fs.Int("universe", 0, "name the first N synthetic symbols as `marketdata-svc generate --universe` names its first N tickers (those with bars)")
	seed := fs.Uint64("seed", 1, "--universe: generate's --seed")
	exchanges := fs.Int("exchanges", generate.DefaultUniverseExchanges, "--universe: generate's --exchanges")
	var actions []action
	fs.Func("split", "SYMBOL:YYYY-MM-DD:FACTOR, a split (new shares per old) with that ex-date; repeatable", func(v string) error {
		return addAction(&actions, "split", v)
	})
	fs.Func("dividend", "SYMBOL:YYYY-MM-DD:AMOUNT, a cash dividend with that ex-date; repeatable", func(v string) error {
		return addAction(&actions, "dividend", v)
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *universe < 0 || *universe > *synthetic {
		return fmt.Errorf("providerfake: --universe %d: want 0 to --symbols (%d)", *universe, *synthetic)
	}
	f := feedfake.New(*token)
	f.Synthetic = *synthetic
	if *universe > 0 {
		tickers := generate.UniverseTickers(generate.Options{Universe: *universe, Seed: *seed, Exchanges: *exchanges})
		names := make([]string, len(tickers))
		for i, t := range tickers {
			names[i] = t.Symbol
		}
		f.SetNames(names)
	}
	for _, a := range actions {
		if a.kind == "split" {
			f.SetSplit(a.symbol, a.date, a.value)
		} else {
			f.SetDividend(a.symbol, a.date, a.value)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", f.Handler())
	mux.HandleFunc("PUT /fake/bar", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		b := feedfake.Bar{Date: q.Get("date"), Open: q.Get("open"), High: q.Get("high"), Low: q.Get("low"), Close: q.Get("close"), Volume: q.Get("volume")}
		if _, err := time.Parse(time.DateOnly, b.Date); err != nil || q.Get("symbol") == "" {
			http.Error(w, "want symbol, date (YYYY-MM-DD), open, high, low, close, volume", http.StatusBadRequest)
			return
		}
		f.SetBar(q.Get("symbol"), b)
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "providerfake listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// action is a split or dividend given on the command line.
type action struct {
	kind, symbol, date string
	value              float64
}

// addAction reads SYMBOL:DATE:VALUE into a kind action.
func addAction(actions *[]action, kind, v string) error {
	parts := strings.Split(v, ":")
	if len(parts) != 3 || parts[0] == "" {
		return fmt.Errorf("want SYMBOL:YYYY-MM-DD:VALUE, got %q", v)
	}
	if _, err := time.Parse(time.DateOnly, parts[1]); err != nil {
		return fmt.Errorf("%s date: %w", kind, err)
	}
	x, err := strconv.ParseFloat(parts[2], 64)
	if err != nil || !(x > 0) {
		return fmt.Errorf("%s value %q: want a positive number", kind, parts[2])
	}
	*actions = append(*actions, action{kind: kind, symbol: strings.ToUpper(parts[0]), date: parts[1], value: x})
	return nil
}
