// Command allreduce times an all-reduce (sum) of float32 values across
// the processes of a job joined through package distributed, for
// comparison with allreduce_mpi.c under the same launcher:
//
//	mpirun -np 2 ./allreduce -bytes 67108864
//
// The all-reduce is the collective package's algorithm written directly
// over Exchange: a reduce-scatter (process i receives everyone's chunk i
// and folds the chunks in rank order) and an all-gather of the reduced
// chunks, received straight into the result.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/distributed"
)

func main() {
	bytes := flag.Int("bytes", 64<<20, "size of the reduced buffer")
	rounds := flag.Int("rounds", 20, "timed rounds")
	flag.Parse()
	if err := run(*bytes/4, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "allreduce:", err)
		os.Exit(1)
	}
}

func run(n, rounds int) error {
	cfg, found, err := distributed.ConfigFromEnv()
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("not started by a launcher (mpirun, srun) nor given %s", distributed.EnvCoordinator)
	}
	ctx := context.Background()
	node, err := distributed.Join(ctx, cfg)
	if err != nil {
		return err
	}
	defer node.Close()
	a := newAllReduce(node, n)
	for i := range a.in {
		a.in[i] = float32(node.Process()+1) + float32(i%7)
	}
	times := make([]float64, rounds)
	for r := -3; r < rounds; r++ {
		if err := a.barrier(ctx, r); err != nil {
			return err
		}
		t0 := time.Now()
		if err := a.run(ctx, uint64(r+3)); err != nil {
			return err
		}
		dt, err := a.slowest(ctx, r, time.Since(t0).Seconds())
		if err != nil {
			return err
		}
		if r >= 0 {
			times[r] = dt
		}
	}
	p := float32(node.Devices())
	if want := p*(p+1)/2 + p*5; a.out[5] != want {
		return fmt.Errorf("out[5] = %g, want %g", a.out[5], want)
	}
	slices.Sort(times)
	if node.Process() == 0 {
		med := times[rounds/2]
		fmt.Printf("axle procs=%d bytes=%d min_ms=%.3f median_ms=%.3f GB/s=%.3f\n",
			node.Devices(), 4*n, times[0]*1e3, med*1e3, float64(4*n)/med/1e9)
	}
	return nil
}

type allReduce struct {
	node         *distributed.Node
	self, procs  int
	in, out      []float32
	parts        [][]float32 // the reduce-scatter's chunks; parts[self] is in's
	bounds       []int       // chunk i is [bounds[i], bounds[i+1])
	sends, recvs []collective.Message
}

func newAllReduce(node *distributed.Node, n int) *allReduce {
	p := node.Devices()
	a := &allReduce{node: node, self: node.LocalDevices()[0], procs: p,
		in: make([]float32, n), out: make([]float32, n)}
	for i := 0; i <= p; i++ {
		a.bounds = append(a.bounds, i*n/p)
	}
	mine := a.bounds[a.self+1] - a.bounds[a.self]
	for range p {
		a.parts = append(a.parts, make([]float32, mine))
	}
	return a
}

func asBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// run all-reduces in into out. A process's own chunk needs no message:
// it is folded straight from in, and the sum is written straight into
// its place in out, which the all-gather then sends.
func (a *allReduce) run(ctx context.Context, launch uint64) error {
	key := collective.Key{Program: 1, Launch: launch, Op: "all-reduce"}
	a.sends, a.recvs = a.sends[:0], a.recvs[:0]
	for d := range a.procs {
		if d != a.self {
			a.sends = append(a.sends, collective.Message{Peer: d, Data: asBytes(a.chunk(a.in, d))})
			a.recvs = append(a.recvs, collective.Message{Peer: d, Data: asBytes(a.parts[d])})
		}
	}
	if err := a.node.Exchange(ctx, a.self, key, a.sends, a.recvs); err != nil {
		return err
	}
	a.parts[a.self] = a.chunk(a.in, a.self)
	acc := a.chunk(a.out, a.self)
	if a.procs == 1 {
		copy(acc, a.parts[0])
	} else {
		add(acc, a.parts[0], a.parts[1])
	}
	for _, part := range a.parts[min(2, a.procs):] {
		add(acc, acc, part)
	}
	key.Phase = 1
	a.sends, a.recvs = a.sends[:0], a.recvs[:0]
	for d := range a.procs {
		if d != a.self {
			a.sends = append(a.sends, collective.Message{Peer: d, Data: asBytes(acc)})
			a.recvs = append(a.recvs, collective.Message{Peer: d, Data: asBytes(a.chunk(a.out, d))})
		}
	}
	return a.node.Exchange(ctx, a.self, key, a.sends, a.recvs)
}

func (a *allReduce) chunk(f []float32, d int) []float32 { return f[a.bounds[d]:a.bounds[d+1]] }

// add sets dst = x + y, element by element (in that order, so that the
// fold is left to right in rank order).
func add(dst, x, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// barrier and slowest exchange 8 bytes with every process: the first to
// start a round together, the second to take the slowest process's time.
func (a *allReduce) gather8(ctx context.Context, op string, r int, v uint64) ([]uint64, error) {
	key := collective.Key{Program: 2, Launch: uint64(r + 3), Op: op}
	var sends, recvs []collective.Message
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, v)
	got := make([]byte, 8*a.procs)
	for d := range a.procs {
		sends = append(sends, collective.Message{Peer: d, Data: out})
		recvs = append(recvs, collective.Message{Peer: d, Data: got[8*d : 8*d+8]})
	}
	if err := a.node.Exchange(ctx, a.self, key, sends, recvs); err != nil {
		return nil, err
	}
	vs := make([]uint64, a.procs)
	for d := range vs {
		vs[d] = binary.LittleEndian.Uint64(got[8*d:])
	}
	return vs, nil
}

func (a *allReduce) barrier(ctx context.Context, r int) error {
	_, err := a.gather8(ctx, "barrier", r, 0)
	return err
}

func (a *allReduce) slowest(ctx context.Context, r int, dt float64) (float64, error) {
	vs, err := a.gather8(ctx, "time", r, math.Float64bits(dt))
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for _, v := range vs {
		worst = max(worst, math.Float64frombits(v))
	}
	return worst, nil
}
