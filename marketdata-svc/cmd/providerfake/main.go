// Command providerfake serves the fakes of the data providers that
// `marketdata-svc sync` reads (internal/feed/feedfake) on one address, for
// `make sync-demo` and the sync benchmarks: marketstack under
// /marketstack/v2, Tiingo at /tiingo, EODHD under /eodhd, Stooq under
// /stooq. Its answers are written from each provider's documentation and
// hold synthetic prices only (symbols S00000...). PUT /fake/bar restates a
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
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() { cmdmain.Run("providerfake", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("providerfake", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	token := fs.String("token", "demo-token", "the credential every keyed fake expects")
	synthetic := fs.Int("symbols", 10, "synthetic symbols S00000... with a bar every weekday")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f := feedfake.New(*token)
	f.Synthetic = *synthetic
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
