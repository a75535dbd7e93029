package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// process is a long-running program of the benchmark (a service or the
// ceiling server).
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan error
}

func (r *runner) start(ctx context.Context, s cmdSpec, logPath string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := r.command(ctx, s)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &process{name: s.name, cmd: cmd, log: f, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and waits for the exit.
func (p *process) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// waitHTTP polls url until it answers 200, the process exits, or the
// timeout passes.
func (p *process) waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited before answering %s: %v (see %s)", p.name, url, err, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer %s within %s (see %s)", p.name, url, timeout, p.log.Name())
}

// memStatus returns VmHWM and VmRSS of pid in bytes.
func memStatus(pid int) (hwm, rss int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmHWM" {
			hwm = kb * 1024
		} else {
			rss = kb * 1024
		}
	}
	if hwm == 0 && rss == 0 {
		return 0, 0, errors.New("no VmHWM/VmRSS in status")
	}
	return hwm, rss, nil
}

// machineTicks returns busy and total clock ticks of all CPUs.
func machineTicks() (busy, total int64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

const ticksPerSecond = 100 // USER_HZ on Linux

// procSnapshot is the CPU ticks of every process by pid, with its command
// name.
type procSnapshot map[int]procTicks

type procTicks struct {
	comm  string
	ticks int64
}

func snapshotProcs() procSnapshot {
	out := procSnapshot{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = procTicks{comm: s[i+1 : j], ticks: u + st}
	}
	return out
}

// category names the part of the benchmark a process belongs to, or ""
// for work that is not part of it. PostgreSQL backends count when they
// serve a bench database (their process title names it).
func category(pid int, comm string, roles map[int]string) string {
	if r, ok := roles[pid]; ok {
		return r
	}
	switch comm {
	case "postgres":
		title, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(title), " bench_") {
			return "postgres"
		}
	case "redis-server":
		return "redis"
	case "wrk", "pgbench":
		return "loadgen"
	}
	return ""
}

// sampler watches a workload: the peak RSS of the measured process, and
// between two snapshots taken while the load runs (1 s after the start and
// 0.5 s before the end, so the load generator and its database sessions are
// alive for both) the CPU of every part of the benchmark; the rest of the
// machine's busy time is "other", work that is not part of the benchmark.
type sampler struct {
	pid                 int
	roles               map[int]string
	cores               int
	stop                chan struct{}
	wg                  sync.WaitGroup
	maxRSS              int64
	ProcCores, MachBusy float64
	Cores               map[string]float64
}

func startSampler(pid int, roles map[int]string, d time.Duration, cores int) *sampler {
	s := &sampler{pid: pid, roles: roles, cores: cores, stop: make(chan struct{})}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			if pid > 0 {
				if _, rss, err := memStatus(pid); err == nil && rss > s.maxRSS {
					s.maxRSS = rss
				}
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		lead, tail := time.Second, 500*time.Millisecond
		if d < 3*time.Second {
			lead, tail = d/4, d/4
		}
		time.Sleep(lead)
		t0 := time.Now()
		snap0 := snapshotProcs()
		busy0, total0 := machineTicks()
		time.Sleep(d - lead - tail)
		snap1 := snapshotProcs()
		busy1, total1 := machineTicks()
		s.account(time.Since(t0).Seconds(), snap0, snap1, busy1-busy0, total1-total0)
	}()
	return s
}

func (s *sampler) account(secs float64, snap0, snap1 procSnapshot, busy, total int64) {
	if secs <= 0 || total <= 0 {
		return
	}
	s.MachBusy = float64(busy) / float64(total) * float64(s.cores)
	s.Cores = map[string]float64{}
	known := 0.0
	for pid, p := range snap1 {
		d := p.ticks // a process started during the window counts whole
		if p0, ok := snap0[pid]; ok && p0.comm == p.comm {
			d -= p0.ticks
		}
		v := float64(d) / ticksPerSecond / secs
		if pid == s.pid {
			s.ProcCores = v
		}
		c := category(pid, p.comm, s.roles)
		if c == "" {
			continue
		}
		s.Cores[c] += v
		known += v
	}
	s.Cores["other"] = max(0, s.MachBusy-known)
}

// finish waits for the sampling to end; call it once the load is over.
func (s *sampler) finish() {
	close(s.stop)
	s.wg.Wait()
}
