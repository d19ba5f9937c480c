//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process that stops (SIGSTOP: alive, silent) fails the job once its
// heartbeats are missed for --heartbeat, naming it.
func TestDistributedProcessHangs(t *testing.T) {
	coord := freeAddr(t)
	outs := make([]bytes.Buffer, 4)
	var cmds []*exec.Cmd
	for r := range 4 {
		cmd := axleProcess(t, coord, r, 4, "run", "--backend", "cpu", "--distributed", "--heartbeat", "3s", "--repeat", "100000000", stepExample)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
	}()
	time.Sleep(2 * time.Second)
	if err := cmds[1].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for _, r := range []int{0, 2, 3} {
		done := make(chan error, 1)
		go func() { done <- cmds[r].Wait() }()
		select {
		case err := <-done:
			msg := outs[r].String()
			if err == nil || !strings.Contains(msg, fmt.Sprintf("pid %d", cmds[1].Process.Pid)) || !strings.Contains(msg, "process 1 (host") {
				t.Fatalf("process %d (exit %v) does not name the stopped process 1:\n%s", r, err, tail(msg))
			}
		case <-time.After(30*time.Second - time.Since(stopped)):
			t.Fatalf("process %d still runs 30 s after process 1 stopped", r)
		}
	}
	t.Logf("the others failed %.1f s after the stop", time.Since(stopped).Seconds())
}
