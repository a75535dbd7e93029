// Command benchdata writes the deterministic synthetic files the benchmark
// loads: notes as CSV for PostgreSQL's COPY into the notes schema, and daily
// prices and 1-minute bars as CSV for `marketdata-svc import` and its COPY
// ceiling (the minutes also stream into COPY for the intraday dataset).
//
//	benchdata notes -accounts accounts.tsv -n 100000 -out notes.csv
//	benchdata notes -accounts accounts.tsv -n 1000000 -out - | psql ... -c '\copy notes ... FROM STDIN'
//	benchdata prices -rows 1000000 -out prices.csv
//	benchdata intraday -symbols 10 -days 257 -out minutes.csv
//	benchdata intraday -symbols 500 -days 257 -month 2025-03 -header=false -out - | psql ... -c '\copy ... FROM pstdin'
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tickerdesk/tickerdesk/pkg/cmdmain"
)

func main() {
	cmdmain.Run("benchdata", run)
}

func run(_ context.Context, args []string, _ func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: benchdata notes|prices|intraday [flags]")
	}
	switch args[0] {
	case "notes":
		return notesCmd(args[1:], stdout)
	case "prices":
		return pricesCmd(args[1:], stdout)
	case "intraday":
		return intradayCmd(args[1:], stdout)
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func notesCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("notes", flag.ContinueOnError)
	accountsFile := fs.String("accounts", "", "file of account ids, one per line (first tab-separated field)")
	n := fs.Int("n", 100_000, "number of notes, spread evenly over the accounts")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output CSV file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	accounts, err := readFirstFields(*accountsFile)
	if err != nil {
		return err
	}
	if len(accounts) == 0 {
		return errors.New("no accounts")
	}
	return writeCSV(*out, func(w *csv.Writer) (int, error) {
		return writeNotes(w, accounts, *n, *seed)
	}, stdout)
}

func pricesCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	rows := fs.Int("rows", 1_000_000, "number of daily bars")
	days := fs.Int("days", 2500, "trading days per symbol")
	prefix := fs.String("prefix", "IMPB", "symbol prefix (symbols are PREFIX0001...)")
	seed := fs.Uint64("seed", 7, "random seed")
	out := fs.String("out", "", "output CSV file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return writeCSV(*out, func(w *csv.Writer) (int, error) {
		return writePrices(w, *rows, *days, *prefix, *seed)
	}, stdout)
}

func intradayCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("intraday", flag.ContinueOnError)
	var s intradaySpec
	fs.IntVar(&s.symbols, "symbols", 10, "number of symbols (PREFIX0001...), all on a New York exchange")
	fs.IntVar(&s.days, "days", IntradayMaxDays, "trading days per symbol: weekdays from 2025-01-06")
	fs.StringVar(&s.prefix, "prefix", "IB", "symbol prefix")
	fs.Uint64Var(&s.seed, "seed", 11, "random seed")
	fs.StringVar(&s.month, "month", "", "YYYY-MM: only the minutes of that month")
	fs.BoolVar(&s.header, "header", true, "write the header line")
	out := fs.String("out", "", "output CSV file, - for stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// Written by hand, not by encoding/csv: no field needs quoting, and
	// the 50-million-row dataset streams through here into COPY.
	return writeFile(*out, func(w *bufio.Writer) (int, error) { return writeIntraday(w, s) }, stdout)
}

func writeCSV(path string, write func(*csv.Writer) (int, error), stdout io.Writer) error {
	return writeFile(path, func(bw *bufio.Writer) (int, error) {
		w := csv.NewWriter(bw)
		n, err := write(w)
		if err == nil {
			w.Flush()
			err = w.Error()
		}
		return n, err
	}, stdout)
}

// writeFile writes the rows of write to path, buffered, and says how many.
func writeFile(path string, write func(*bufio.Writer) (int, error), stdout io.Writer) error {
	if path == "" {
		return errors.New("-out is required")
	}
	// "-out -" streams to stdout (into psql's COPY FROM STDIN without a
	// file on disk); the summary line then goes to stderr.
	f := os.Stdout
	if path == "-" {
		stdout = os.Stderr
	} else {
		var err error
		if f, err = os.Create(path); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "benchdata: wrote %d rows to %s\n", n, path)
	return nil
}

func readFirstFields(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f, _, _ := strings.Cut(strings.TrimSpace(line), "\t"); f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}
