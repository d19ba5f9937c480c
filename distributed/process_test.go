package distributed

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/axle-ml/axle/collective"
)

// The tests run jobs of real processes on 127.0.0.1: the test binary
// runs itself again as TestHelperProcess, with AXLE_* variables saying
// which process it is (read by ConfigFromEnv, as under a launcher) and
// AXLE_TEST_ROLE what it does. A helper prints its progress and result
// as lines ("READY", "OK", "ERR: ...") that the test reads.

const roleVar = "AXLE_TEST_ROLE"

// job is a running set of helper processes.
type job struct {
	t     *testing.T
	cmds  []*exec.Cmd
	outs  []*bytes.Buffer
	lines []chan string
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startJob starts a process for each of ranks (in a job of size
// processes), each in role, with extra variables; "@r:V=x" sets V for
// the process of rank r only.
func startJob(t *testing.T, processes int, ranks []int, role string, extra ...string) *job {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	coord := freeAddr(t)
	j := &job{t: t}
	for _, r := range ranks {
		cmd := exec.Command(exe, "-test.run=^TestHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), roleVar+"="+role, EnvCoordinator+"="+coord,
			EnvProcesses+"="+strconv.Itoa(processes), EnvProcess+"="+strconv.Itoa(r), EnvLocalDevices+"=2")
		for _, e := range extra {
			if at, ok := strings.CutPrefix(e, "@"); ok {
				rank, v, _ := strings.Cut(at, ":")
				if rank != strconv.Itoa(r) {
					continue
				}
				e = v
			}
			cmd.Env = append(cmd.Env, e)
		}
		out := &bytes.Buffer{}
		cmd.Stderr = out
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		j.cmds, j.outs, j.lines = append(j.cmds, cmd), append(j.outs, out), append(j.lines, lines)
	}
	t.Cleanup(func() {
		for _, c := range j.cmds {
			c.Process.Kill()
		}
	})
	return j
}

// next returns process i's next result line (skipping go test's own
// output), failing the test after a generous ceiling.
func (j *job) next(i int) string {
	j.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-j.lines[i]:
			if !ok {
				j.t.Fatalf("process %d ended without a result; stderr:\n%s", i, j.outs[i])
			}
			if strings.HasPrefix(l, "READY") || strings.HasPrefix(l, "OK") || strings.HasPrefix(l, "ERR: ") {
				return l
			}
		case <-deadline:
			j.t.Fatalf("process %d gave no result within 60 s", i)
		}
	}
}

// results waits for every process's result line.
func (j *job) results() []string {
	var wg sync.WaitGroup
	out := make([]string, len(j.cmds))
	for i := range j.cmds {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = j.next(i) }()
	}
	wg.Wait()
	return out
}

func TestHelperProcess(t *testing.T) {
	role := os.Getenv(roleVar)
	if role == "" {
		t.Skip("run by the other tests as a process of a job")
	}
	err := runRole(role)
	if err != nil {
		fmt.Printf("ERR: %v\n", err)
	} else {
		fmt.Println("OK")
	}
	os.Stdout.Sync()
}

func durationVar(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

func runRole(role string) error {
	cfg, found, err := ConfigFromEnv()
	if err != nil || !found {
		return fmt.Errorf("environment: %v, %v", found, err)
	}
	cfg.Timeout = durationVar("AXLE_TEST_TIMEOUT", 10*time.Second)
	cfg.Heartbeat = durationVar("AXLE_TEST_HEARTBEAT", 10*time.Second)
	cfg.Listen = "127.0.0.1:0"
	ctx := context.Background()
	n, err := Join(ctx, cfg)
	if err != nil {
		return err
	}
	defer n.Close()
	switch role {
	case "exchange":
		return allPairs(ctx, n, 0)
	case "kv":
		return kvRole(ctx, n)
	case "die", "hang":
		// One exchange that succeeds, then a second in which process
		// "victim" is killed or stopped by the test while the others wait.
		if err := allPairs(ctx, n, 0); err != nil {
			return err
		}
		victim, _ := strconv.Atoi(os.Getenv("AXLE_TEST_VICTIM"))
		if n.Process() == victim {
			fmt.Println("READY")
			select {}
		}
		return allPairs(ctx, n, 1)
	}
	return fmt.Errorf("unknown role %q", role)
}

// fill writes the message device from sends device to under launch:
// bytes (i+off)*31 mod 251 at i, a period of 251 whose phase differs
// for every pair and launch.
func fill(b []byte, launch uint64, from, to int) {
	off := from*7 + to*13 + int(launch)*5
	for i := 0; i < len(b) && i < 251; i++ {
		b[i] = byte((i + off) * 31 % 251)
	}
	for n := 251; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// allPairs has every local device send to every device of the job
// (itself included) a small and a large message, checking each byte
// received. The large one spans several ring slots.
func allPairs(ctx context.Context, n *Node, launch uint64) error {
	devices := n.Devices()
	errs := make(chan error, len(n.LocalDevices()))
	for _, self := range n.LocalDevices() {
		go func() {
			var err error
			for _, size := range []int{100, 2*slotSize + 3} {
				if err = exchangeOnce(ctx, n, self, devices, size, launch); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range n.LocalDevices() {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func exchangeOnce(ctx context.Context, n *Node, self, devices, size int, launch uint64) error {
	var sends, recvs []collective.Message
	for d := range devices {
		out := make([]byte, size)
		fill(out, launch, self, d)
		sends = append(sends, collective.Message{Peer: d, Data: out})
		recvs = append(recvs, collective.Message{Peer: d, Data: make([]byte, size)})
	}
	key := collective.Key{Program: 7, Launch: launch, Op: "all-to-all", Seq: uint64(size)}
	if err := n.Exchange(ctx, self, key, sends, recvs); err != nil {
		return err
	}
	want := make([]byte, size)
	for _, m := range recvs {
		fill(want, launch, m.Peer, self)
		if i := firstDiff(m.Data, want); i >= 0 {
			return fmt.Errorf("device %d got byte %d = %d from device %d, want %d", self, i, m.Data[i], m.Peer, want[i])
		}
	}
	return nil
}

func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// kvRole: process 0 publishes after the others started waiting; then
// each publishes its rank and process 0 reads them all.
func kvRole(ctx context.Context, n *Node) error {
	kv := n.KV()
	if n.Process() == 0 {
		time.Sleep(100 * time.Millisecond)
		if err := kv.Set(ctx, "greeting", []byte("hello")); err != nil {
			return err
		}
	} else if v, err := kv.Get(ctx, "greeting"); err != nil || string(v) != "hello" {
		return fmt.Errorf("greeting %q, %v", v, err)
	}
	if err := kv.Set(ctx, fmt.Sprint("rank/", n.Process()), []byte(fmt.Sprint(n.Process()*10))); err != nil {
		return err
	}
	for p := range n.Devices() / 2 {
		v, err := kv.Get(ctx, fmt.Sprint("rank/", p))
		if err != nil || string(v) != fmt.Sprint(p*10) {
			return fmt.Errorf("rank/%d = %q, %v", p, v, err)
		}
	}
	// A key nobody sets times out.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := kv.Get(short, "never"); err == nil {
		return fmt.Errorf("got a value for a key nobody set")
	}
	return nil
}

func ranks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

func TestExchangeAllPairs(t *testing.T) {
	for _, procs := range []int{2, 4} {
		for _, path := range []string{"rings", "tcp"} {
			t.Run(fmt.Sprint(procs, " processes, ", path), func(t *testing.T) {
				extra := []string{}
				if path == "tcp" {
					extra = append(extra, EnvNoShm+"=1")
				}
				for i, r := range startJob(t, procs, ranks(procs), "exchange", extra...).results() {
					if r != "OK" {
						t.Errorf("process %d: %s", i, r)
					}
				}
			})
		}
	}
}

func TestKV(t *testing.T) {
	for i, r := range startJob(t, 3, ranks(3), "kv").results() {
		if r != "OK" {
			t.Errorf("process %d: %s", i, r)
		}
	}
}

func TestRendezvousTimeout(t *testing.T) {
	// Process 2 of 4 never starts.
	j := startJob(t, 4, []int{0, 1, 3}, "exchange", "AXLE_TEST_TIMEOUT=1s")
	for i, r := range j.results() {
		if !strings.Contains(r, "rendezvous timed out after 1s: process 2 never arrived (3 of 4 did)") {
			t.Errorf("process %d: %s", i, r)
		}
	}
}

func TestRendezvousMismatch(t *testing.T) {
	tests := []struct {
		name  string
		procs int
		ranks []int
		extra []string
		want  string
	}{
		{"sizes", 2, []int{0, 1}, []string{"@1:" + EnvProcesses + "=3"}, "says the job has 3 processes, process 0 says 2"},
		{"devices", 2, []int{0, 1}, []string{"@1:" + EnvLocalDevices + "=3"}, "has 3 local devices, process 0 has 2"},
		{"duplicate rank", 3, []int{0, 1, 1}, nil, "two processes claim rank 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := startJob(t, tt.procs, tt.ranks, "exchange", append(tt.extra, "AXLE_TEST_TIMEOUT=5s")...)
			for i, r := range j.results() {
				if !strings.Contains(r, "rendezvous failed") || !strings.Contains(r, tt.want) {
					t.Errorf("process %d: %s\nwant an error containing %q", i, r, tt.want)
				}
			}
		})
	}
}

func TestPeerDies(t *testing.T) {
	j := startJob(t, 4, ranks(4), "die", "AXLE_TEST_VICTIM=2")
	if r := j.next(2); r != "READY" {
		t.Fatalf("process 2: %s", r)
	}
	pid := j.cmds[2].Process.Pid
	j.cmds[2].Process.Kill()
	for _, i := range []int{0, 1, 3} {
		r := j.next(i)
		want := fmt.Sprintf("distributed: process 2 (host %s, pid %d)", hostname(), pid)
		if !strings.Contains(r, want) {
			t.Errorf("process %d: %s\nwant an error containing %q", i, r, want)
		}
	}
}

func hostname() string { h, _ := os.Hostname(); return h }
