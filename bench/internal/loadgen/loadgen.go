// Package loadgen turns the outputs of the load generators (wrk with the
// harness's Lua summary, pgbench with per-transaction logs) into one common
// measurement shape.
package loadgen

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Measurement is one load-generator run.
type Measurement struct {
	Tool       string  `json:"tool"`
	Requests   int64   `json:"requests"`
	Seconds    float64 `json:"seconds"`
	RPS        float64 `json:"rps"`
	P50Ms      float64 `json:"p50_ms"`
	P90Ms      float64 `json:"p90_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MeanMs     float64 `json:"mean_ms"`
	MaxMs      float64 `json:"max_ms"`
	Errors     int64   `json:"errors"`
	ErrorsNote string  `json:"errors_detail,omitempty"`
	Bytes      int64   `json:"bytes,omitempty"`
	// LatencyNote says how latencies were derived when not measured
	// directly.
	LatencyNote string `json:"latency_note,omitempty"`
	// Grid is wrk's latency at every 0.1% (0.1 to 99.9), in µs, which
	// Merge needs; not recorded.
	Grid []int64 `json:"-"`
}

type wrkSummary struct {
	DurationUs    int64   `json:"duration_us"`
	Requests      int64   `json:"requests"`
	Bytes         int64   `json:"bytes"`
	ErrorsConnect int64   `json:"errors_connect"`
	ErrorsRead    int64   `json:"errors_read"`
	ErrorsWrite   int64   `json:"errors_write"`
	ErrorsStatus  int64   `json:"errors_status"`
	ErrorsTimeout int64   `json:"errors_timeout"`
	MeanUs        float64 `json:"latency_mean_us"`
	MaxUs         int64   `json:"latency_max_us"`
	P50Us         int64   `json:"p50_us"`
	P90Us         int64   `json:"p90_us"`
	P99Us         int64   `json:"p99_us"`
	Q             []int64 `json:"q"`
}

// ParseWrk reads the BENCHJSON line that lua/common.lua's done() prints.
// Errors count socket errors (connect, read, write, timeout) and responses
// with a status of 400 or more, as wrk counts them.
func ParseWrk(stdout string) (Measurement, error) {
	for _, line := range strings.Split(stdout, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "BENCHJSON ")
		if !ok {
			continue
		}
		var s wrkSummary
		if err := json.Unmarshal([]byte(rest), &s); err != nil {
			return Measurement{}, fmt.Errorf("parse wrk summary: %w", err)
		}
		m := Measurement{Tool: "wrk", Requests: s.Requests, Seconds: float64(s.DurationUs) / 1e6, Bytes: s.Bytes,
			P50Ms: ms(s.P50Us), P90Ms: ms(s.P90Us), P99Ms: ms(s.P99Us), MeanMs: s.MeanUs / 1000, MaxMs: ms(s.MaxUs), Grid: s.Q}
		if m.Seconds > 0 {
			m.RPS = float64(s.Requests) / m.Seconds
		}
		m.Errors = s.ErrorsConnect + s.ErrorsRead + s.ErrorsWrite + s.ErrorsTimeout + s.ErrorsStatus
		if m.Errors > 0 {
			m.ErrorsNote = fmt.Sprintf("status>=400: %d, connect: %d, read: %d, write: %d, timeout: %d",
				s.ErrorsStatus, s.ErrorsConnect, s.ErrorsRead, s.ErrorsWrite, s.ErrorsTimeout)
		}
		return m, nil
	}
	return Measurement{}, errors.New("no BENCHJSON line in wrk output")
}

func ms(us int64) float64 { return float64(us) / 1000 }

// gridSteps is the number of percentiles in a wrk run's Grid.
const gridSteps = 999

// Merge is the measurement of several wrk runs of the same load taken as
// one: requests, bytes, errors and seconds add up, the mean is weighted by
// requests, and the percentiles are those of the runs' latencies pooled,
// each run's distribution read from its Grid (every 0.1%) and weighted by
// its requests, so a merged percentile is within 0.1% of rank of the true
// one. One run is returned as it is.
func Merge(runs []Measurement) (Measurement, error) {
	if len(runs) == 0 {
		return Measurement{}, errors.New("merge: no runs")
	}
	if len(runs) == 1 {
		return runs[0], nil
	}
	type point struct {
		us     int64
		weight float64
	}
	var pts []point
	out := Measurement{Tool: runs[0].Tool}
	var notes []string
	var latencySum float64
	for i, r := range runs {
		if r.Tool != "wrk" || len(r.Grid) != gridSteps {
			return Measurement{}, fmt.Errorf("merge: run %d has no latency grid", i+1)
		}
		out.Requests += r.Requests
		out.Seconds += r.Seconds
		out.Bytes += r.Bytes
		out.Errors += r.Errors
		out.MaxMs = max(out.MaxMs, r.MaxMs)
		latencySum += r.MeanMs * float64(r.Requests)
		if r.ErrorsNote != "" {
			notes = append(notes, fmt.Sprintf("run %d: %s", i+1, r.ErrorsNote))
		}
		for _, us := range r.Grid {
			pts = append(pts, point{us, float64(r.Requests) / gridSteps})
		}
	}
	out.ErrorsNote = strings.Join(notes, "; ")
	if out.Seconds > 0 {
		out.RPS = float64(out.Requests) / out.Seconds
	}
	if out.Requests > 0 {
		out.MeanMs = latencySum / float64(out.Requests)
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.us, b.us) })
	var total float64
	for _, p := range pts {
		total += p.weight
	}
	at := func(pct float64) float64 {
		want, sum := total*pct/100, 0.0
		for _, p := range pts {
			if sum += p.weight; sum >= want {
				return ms(p.us)
			}
		}
		return ms(pts[len(pts)-1].us)
	}
	out.P50Ms, out.P90Ms, out.P99Ms = at(50), at(90), at(99)
	out.LatencyNote = fmt.Sprintf("percentiles of %d runs pooled from each run's percentiles at every 0.1%%", len(runs))
	return out, nil
}

var (
	tpsRe       = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	processedRe = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	failedRe    = regexp.MustCompile(`(?m)^number of failed transactions: (\d+)`)
	durationRe  = regexp.MustCompile(`(?m)^duration: (\d+) s`)
)

// ParsePgbench reads pgbench's summary and the per-transaction log files
// written with --log --log-prefix=prefix. Latency percentiles come from the
// logs (pgbench itself prints only the mean). Errors are failed
// transactions plus clients pgbench aborted.
func ParsePgbench(stdout, logPrefix string) (Measurement, error) {
	m := Measurement{Tool: "pgbench"}
	tps := tpsRe.FindStringSubmatch(stdout)
	if tps == nil {
		return m, errors.New("no tps line in pgbench output")
	}
	m.RPS, _ = strconv.ParseFloat(tps[1], 64)
	if p := processedRe.FindStringSubmatch(stdout); p != nil {
		m.Requests, _ = strconv.ParseInt(p[1], 10, 64)
	}
	if d := durationRe.FindStringSubmatch(stdout); d != nil {
		m.Seconds, _ = strconv.ParseFloat(d[1], 64)
	}
	if f := failedRe.FindStringSubmatch(stdout); f != nil {
		m.Errors, _ = strconv.ParseInt(f[1], 10, 64)
	}
	if strings.Contains(stdout, "aborted") {
		m.ErrorsNote = "pgbench aborted clients: " + firstLineWith(stdout, "aborted")
		if m.Errors == 0 {
			m.Errors = 1
		}
	}
	lat, failed, zeros, err := readPgbenchLogs(logPrefix)
	if err != nil {
		return m, err
	}
	if zeros > 0 {
		m.LatencyNote = fmt.Sprintf("pgbench logged %d of %d transactions with 0 µs (its clock is read lazily); "+
			"latencies are the intervals between a client's consecutive completions", zeros, len(lat))
	}
	if failed > m.Errors {
		m.Errors = failed
	}
	if len(lat) == 0 {
		return m, errors.New("pgbench logged no transactions")
	}
	slices.Sort(lat)
	var sum int64
	for _, v := range lat {
		sum += v
	}
	m.P50Ms, m.P90Ms, m.P99Ms = ms(Percentile(lat, 50)), ms(Percentile(lat, 90)), ms(Percentile(lat, 99))
	m.MeanMs, m.MaxMs = float64(sum)/float64(len(lat))/1000, ms(lat[len(lat)-1])
	return m, nil
}

func firstLineWith(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// readPgbenchLogs reads every prefix.* log: lines of "client_id
// transaction_no time script_no time_epoch time_us", time being the latency
// in microseconds, or "failed"/"skipped", and time_epoch/time_us the
// completion time. pgbench 15 reads its clock lazily, so a very short
// transaction can be logged with 0 µs; when more than 1% are, the latencies
// are taken as the intervals between a client's consecutive completions
// instead (clients run back to back, with no think time or rate limit).
func readPgbenchLogs(prefix string) (lat []int64, failed int64, zeros int, err error) {
	files, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, 0, 0, err
	}
	if len(files) == 0 {
		return nil, 0, 0, fmt.Errorf("no pgbench log files %s.*", prefix)
	}
	type txn struct {
		client, no, lat, end int64
	}
	var txns []txn
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, 0, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 6 {
				continue
			}
			v, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				failed++
				continue
			}
			client, _ := strconv.ParseInt(fields[0], 10, 64)
			no, _ := strconv.ParseInt(fields[1], 10, 64)
			sec, _ := strconv.ParseInt(fields[4], 10, 64)
			us, _ := strconv.ParseInt(fields[5], 10, 64)
			txns = append(txns, txn{client: client, no: no, lat: v, end: sec*1_000_000 + us})
			if v == 0 {
				zeros++
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, 0, 0, err
		}
	}
	if zeros*100 <= len(txns) {
		for _, t := range txns {
			lat = append(lat, t.lat)
		}
		return lat, failed, 0, nil
	}
	slices.SortFunc(txns, func(a, b txn) int {
		if a.client != b.client {
			return int(a.client - b.client)
		}
		return int(a.no - b.no)
	})
	for i, t := range txns {
		if i > 0 && txns[i-1].client == t.client {
			lat = append(lat, t.end-txns[i-1].end)
		} else {
			lat = append(lat, t.lat)
		}
	}
	return lat, failed, zeros, nil
}

// Percentile of sorted values (microseconds here, any unit), nearest rank.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.5) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}
