package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tests here start processes of this test binary that run as the
// axle command (TestMain), joined as a job through the AXLE_* variables
// or, where it is installed, OpenMPI's mpirun.
const runAsAxle = "AXLE_TEST_RUN_AXLE"

func TestMain(m *testing.M) {
	if args := os.Getenv(runAsAxle); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const stepExample = "../../examples/devices/mlp_step_4dev.hlo"

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// axleProcess is one rank of a job of n running axle with args.
func axleProcess(t *testing.T, coord string, rank, n int, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), runAsAxle+"="+strings.Join(args, "\x1f"),
		"AXLE_COORDINATOR_ADDRESS="+coord, fmt.Sprintf("AXLE_NUM_PROCESSES=%d", n), fmt.Sprintf("AXLE_PROCESS_ID=%d", rank))
	return cmd
}

var deviceLines = regexp.MustCompile(`(?m)^(device \d+ \(process \d+\)|result .*)$`)

// perDevice keeps the device headers and result lines, with the process
// numbers dropped (in one process every device is process 0's).
func perDevice(out string) string {
	lines := deviceLines.FindAllString(out, -1)
	for i, l := range lines {
		if j := strings.Index(l, " (process"); j > 0 {
			lines[i] = l[:j]
		}
	}
	return strings.Join(lines, "\n")
}

// The sharded training step run by 4 processes, one device each, prints
// what 4 devices in one process print.
func TestDistributedRunMatchesDevices(t *testing.T) {
	var want bytes.Buffer
	if code := run([]string{"run", "--backend", "cpu", "--devices", "4", stepExample}, &want, os.Stderr); code != 0 {
		t.Fatalf("axle run --devices 4: exit %d", code)
	}
	coord := freeAddr(t)
	outs := make([]bytes.Buffer, 4)
	var cmds []*exec.Cmd
	for r := range 4 {
		cmd := axleProcess(t, coord, r, 4, "run", "--backend", "cpu", "--distributed", stepExample)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	var got []string
	for r, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", r, err, outs[r].String())
		}
		got = append(got, perDevice(outs[r].String()))
	}
	if g, w := strings.Join(got, "\n"), perDevice(want.String()); g != w || !strings.Contains(w, "device 3") {
		t.Fatalf("4 processes printed\n%s\n\n4 devices of one process printed\n%s", g, w)
	}
}

// The same under mpirun, when OpenMPI is installed.
func TestDistributedMpirun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not installed (apt-get install openmpi-bin)")
	}
	var want bytes.Buffer
	if code := run([]string{"run", "--backend", "cpu", "--devices", "4", stepExample}, &want, os.Stderr); code != 0 {
		t.Fatalf("axle run --devices 4: exit %d", code)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mpirun, "--allow-run-as-root", "--oversubscribe", "--tag-output", "-np", "4", "-x", runAsAxle, exe)
	cmd.Env = append(os.Environ(), runAsAxle+"="+strings.Join([]string{"run", "--backend", "cpu", "--distributed", stepExample}, "\x1f"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	// mpirun interleaves the processes' lines; --tag-output prefixes each
	// with its rank ("[1,2]<stdout>:"), by which they are put back apart.
	byRank := make([]string, 4)
	tag := regexp.MustCompile(`^\[\d+,(\d)\]<std(?:out|err)>:(.*)$`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := tag.FindStringSubmatch(line); m != nil {
			r := int(m[1][0] - '0')
			byRank[r] += m[2] + "\n"
		}
	}
	var got []string
	for _, o := range byRank {
		got = append(got, perDevice(o))
	}
	if g, w := strings.Join(got, "\n"), perDevice(want.String()); g != w {
		t.Fatalf("mpirun's 4 processes printed\n%s\n\n4 devices of one process printed\n%s\n\nraw:\n%s", g, w, tail(string(out)))
	}
}

// Killing one of 4 processes mid-run makes the others fail within 30 s
// with an error naming it.
func TestDistributedProcessKilled(t *testing.T) {
	coord := freeAddr(t)
	outs := make([]bytes.Buffer, 4)
	var cmds []*exec.Cmd
	for r := range 4 {
		cmd := axleProcess(t, coord, r, 4, "run", "--backend", "cpu", "--distributed", "--repeat", "100000000", stepExample)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	time.Sleep(2 * time.Second)
	if err := cmds[2].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmds[2].Wait()
	killed := time.Now()
	for _, r := range []int{0, 1, 3} {
		done := make(chan error, 1)
		go func() { done <- cmds[r].Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("process %d exited cleanly after process 2 was killed", r)
			}
			msg := outs[r].String()
			if !strings.Contains(msg, fmt.Sprintf("process 2 (host %s", hostname(t))) || !strings.Contains(msg, fmt.Sprintf("pid %d", cmds[2].Process.Pid)) {
				t.Fatalf("process %d's error does not name process 2 with its pid:\n%s", r, tail(msg))
			}
		case <-time.After(30*time.Second - time.Since(killed)):
			for _, c := range cmds {
				c.Process.Kill()
			}
			t.Fatalf("process %d still runs 30 s after process 2 was killed", r)
		}
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func tail(s string) string {
	if len(s) > 1500 {
		return s[len(s)-1500:]
	}
	return s
}

// A process running another program fails at its first launch, and so
// do the others, naming the device that differs, rather than waiting in
// a collective for messages that never come.
func TestDistributedProgramMismatch(t *testing.T) {
	text, err := os.ReadFile(stepExample)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir() + "/other.hlo"
	if err := os.WriteFile(other, []byte(strings.Replace(string(text), "constant(0.1)", "constant(0.2)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	coord := freeAddr(t)
	outs := make([]bytes.Buffer, 4)
	var cmds []*exec.Cmd
	for r := range 4 {
		file := stepExample
		if r == 3 {
			file = other
		}
		cmd := axleProcess(t, coord, r, 4, "run", "--backend", "cpu", "--distributed", file)
		cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for r, cmd := range cmds {
		if err := cmd.Wait(); err == nil {
			t.Fatalf("process %d succeeded with process 3 running another program", r)
		}
		msg := outs[r].String()
		if r != 3 && !strings.Contains(msg, "device 3 runs program") {
			t.Fatalf("process %d's error does not name device 3's program:\n%s", r, tail(msg))
		}
	}
}
