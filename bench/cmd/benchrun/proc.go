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

// cpuTicks returns the user+system clock ticks used by pid so far.
func cpuTicks(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
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

// sampler watches a process while a workload runs: its peak RSS and the
// CPU it and the whole machine used.
type sampler struct {
	pid                 int
	stop                chan struct{}
	wg                  sync.WaitGroup
	maxRSS              int64
	start               time.Time
	cpu0, busy0, total0 int64
	ProcCores, MachBusy float64
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{}), start: time.Now()}
	if pid > 0 {
		s.cpu0 = cpuTicks(pid)
	}
	s.busy0, s.total0 = machineTicks()
	s.wg.Add(1)
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
	return s
}

// finish ends sampling and computes the cores used by the process and the
// machine's busy share (in cores) over the interval.
func (s *sampler) finish(cores int) {
	close(s.stop)
	s.wg.Wait()
	secs := time.Since(s.start).Seconds()
	if s.pid > 0 && secs > 0 {
		s.ProcCores = float64(cpuTicks(s.pid)-s.cpu0) / ticksPerSecond / secs
	}
	busy, total := machineTicks()
	if total > s.total0 {
		s.MachBusy = float64(busy-s.busy0) / float64(total-s.total0) * float64(cores)
	}
}
