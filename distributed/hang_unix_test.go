//go:build unix

package distributed

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestPeerHangs(t *testing.T) {
	// Process 1 is stopped mid-job: its connections stay open, only its
	// heartbeats stop.
	j := startJob(t, 3, ranks(3), "hang", "AXLE_TEST_VICTIM=1", "AXLE_TEST_HEARTBEAT=1s")
	if r := j.next(1); r != "READY" {
		t.Fatalf("process 1: %s", r)
	}
	pid := j.cmds[1].Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	want := fmt.Sprintf("distributed: process 1 (host %s, pid %d) sent no heartbeat for 1s", hostname(), pid)
	for _, i := range []int{0, 2} {
		if r := j.next(i); !strings.Contains(r, want) {
			t.Errorf("process %d: %s\nwant an error containing %q", i, r, want)
		}
	}
}
