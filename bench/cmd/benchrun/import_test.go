package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// hwmChildMB is what the child of TestWatchHWMIsTheChilds holds.
const hwmChildMB = 48

// A command's peak memory is its own, not the parent's: started from a
// parent holding far more, the figure stays near what the child holds.
func TestWatchHWMIsTheChilds(t *testing.T) {
	if os.Getenv("BENCHRUN_HWM_CHILD") == "1" {
		b := make([]byte, hwmChildMB<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		time.Sleep(300 * time.Millisecond)
		if b[4096] != 1 {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The parent's own peak, far above the child's.
	big := make([]byte, 256<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchHWMIsTheChilds$")
	cmd.Env = append(os.Environ(), "BENCHRUN_HWM_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := watchHWM(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	mb := stop() >> 20
	parent, _, err := memStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// rusage would give at least the parent's peak; the child's own is its
	// 48 MB and its runtime (more under the race detector's shadow
	// memory, which the parent's 256 MB has too).
	t.Logf("child %d MB, parent %d MB", mb, parent>>20)
	if mb < hwmChildMB || mb >= parent>>20-64 {
		t.Errorf("child's peak %d MB, want from %d MB to well under the parent's %d MB", mb, hwmChildMB, parent>>20)
	}
	big[0] = 2 // big stays live while the child runs
}
