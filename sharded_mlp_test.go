package axle_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/axle-ml/axle"
)

// One training step of a two-layer MLP (ReLU, mean squared error, SGD)
// sharded over n partitions as JAX's SPMD partitioner writes data and
// FSDP parallelism: the batch is split across devices, each weight
// matrix's rows too; a device all-gathers the weights before using them,
// reduce-scatters their gradients back to its rows, and all-reduces the
// loss and the (replicated) biases' gradients. With n = 1 it is the plain
// single-device step. Collectives use channel ids, global device ids and
// iota groups, as partitioned dumps do.
const (
	mlpB, mlpD, mlpH, mlpO = 16, 8, 16, 4
	mlpLR                  = 0.1
)

func shardedMLPStep(n int) string {
	b, d, h := mlpB/n, mlpD/n, mlpH/n
	groups := fmt.Sprintf("replica_groups=[1,%d]<=[%d], use_global_device_ids=true", n, n)
	r := strings.NewReplacer("$N", fmt.Sprint(n), "$b", fmt.Sprint(b), "$d", fmt.Sprint(d), "$h", fmt.Sprint(h),
		"$D", fmt.Sprint(mlpD), "$H", fmt.Sprint(mlpH), "$O", fmt.Sprint(mlpO), "$G", groups,
		"$SCALE", fmt.Sprint(2.0/float64(mlpB*mlpO)), "$INV", fmt.Sprint(1.0/float64(mlpB*mlpO)), "$LR", fmt.Sprint(mlpLR))
	return r.Replace(`HloModule mlp_step_$N, num_partitions=$N

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY step {
  x = f32[$b,$D] parameter(0)
  t = f32[$b,$O] parameter(1)
  w1s = f32[$d,$H] parameter(2)
  b1 = f32[$H] parameter(3)
  w2s = f32[$h,$O] parameter(4)
  b2 = f32[$O] parameter(5)
  w1 = f32[$D,$H] all-gather(w1s), channel_id=1, dimensions={0}, $G
  w2 = f32[$H,$O] all-gather(w2s), channel_id=2, dimensions={0}, $G
  xw = f32[$b,$H] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb1 = f32[$b,$H] broadcast(b1), dimensions={1}
  z1 = f32[$b,$H] add(xw, bb1)
  zero = f32[] constant(0)
  zeros = f32[$b,$H] broadcast(zero), dimensions={}
  hid = f32[$b,$H] maximum(z1, zeros)
  hw = f32[$b,$O] dot(hid, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb2 = f32[$b,$O] broadcast(b2), dimensions={1}
  y = f32[$b,$O] add(hw, bb2)
  e = f32[$b,$O] subtract(y, t)
  e2 = f32[$b,$O] multiply(e, e)
  lsum = f32[] reduce(e2, zero), dimensions={0,1}, to_apply=add
  lall = f32[] all-reduce(lsum), channel_id=3, $G, to_apply=add
  inv = f32[] constant($INV)
  loss = f32[] multiply(lall, inv)
  scale = f32[] constant($SCALE)
  scales = f32[$b,$O] broadcast(scale), dimensions={}
  dy = f32[$b,$O] multiply(e, scales)
  dw2l = f32[$H,$O] dot(hid, dy), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dw2s = f32[$h,$O] reduce-scatter(dw2l), channel_id=4, dimensions={0}, $G, to_apply=add
  db2l = f32[$O] reduce(dy, zero), dimensions={0}, to_apply=add
  db2 = f32[$O] all-reduce(db2l), channel_id=5, $G, to_apply=add
  dh = f32[$b,$H] dot(dy, w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  pos = pred[$b,$H] compare(z1, zeros), direction=GT
  dz1 = f32[$b,$H] select(pos, dh, zeros)
  dw1l = f32[$D,$H] dot(x, dz1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dw1s = f32[$d,$H] reduce-scatter(dw1l), channel_id=6, dimensions={0}, $G, to_apply=add
  db1l = f32[$H] reduce(dz1, zero), dimensions={0}, to_apply=add
  db1 = f32[$H] all-reduce(db1l), channel_id=7, $G, to_apply=add
  lr = f32[] constant($LR)
  lrw1 = f32[$d,$H] broadcast(lr), dimensions={}
  uw1 = f32[$d,$H] multiply(lrw1, dw1s)
  nw1 = f32[$d,$H] subtract(w1s, uw1)
  lrb1 = f32[$H] broadcast(lr), dimensions={}
  ub1 = f32[$H] multiply(lrb1, db1)
  nb1 = f32[$H] subtract(b1, ub1)
  lrw2 = f32[$h,$O] broadcast(lr), dimensions={}
  uw2 = f32[$h,$O] multiply(lrw2, dw2s)
  nw2 = f32[$h,$O] subtract(w2s, uw2)
  lrb2 = f32[$O] broadcast(lr), dimensions={}
  ub2 = f32[$O] multiply(lrb2, db2)
  nb2 = f32[$O] subtract(b2, ub2)
  ROOT out = (f32[], f32[$d,$H], f32[$H], f32[$h,$O], f32[$O]) tuple(loss, nw1, nb1, nw2, nb2)
}
`)
}

// mlpState is the global (unsharded) data and parameters of a step.
type mlpState struct {
	x, t, w1, b1, w2, b2 []float32
}

func newMLPState(seed uint64) mlpState {
	rng := rand.New(rand.NewPCG(seed, 7))
	vals := func(n int, s float64) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.NormFloat64() * s)
		}
		return out
	}
	return mlpState{x: vals(mlpB*mlpD, 1), t: vals(mlpB*mlpO, 1), w1: vals(mlpD*mlpH, 0.4),
		b1: vals(mlpH, 0.1), w2: vals(mlpH*mlpO, 0.4), b2: vals(mlpO, 0.1)}
}

// rows is part k of n of a row-major matrix with cols columns.
func rows(m []float32, cols, k, n int) []float32 {
	per := len(m) / cols / n
	return m[k*per*cols : (k+1)*per*cols]
}

// runMLPStep runs the step on n devices and reassembles the global
// loss and parameters (the weights' rows from every device in order; the
// loss and biases, replicated, from device 0 after checking every device
// agrees).
func runMLPStep(t *testing.T, backend string, n int, s mlpState) (loss float32, w1, b1, w2, b2 []float32) {
	t.Helper()
	c := devicesClient(t, backend, n)
	x, err := c.CompileText(shardedMLPStep(n), axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	buf := func(v []float32, dims ...int64) *axle.Buffer {
		b, err := axle.BufferFromSlice(c, v, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	args := make([][]*axle.Buffer, n)
	for k := range n {
		args[k] = []*axle.Buffer{buf(rows(s.x, mlpD, k, n), mlpB/int64(n), mlpD), buf(rows(s.t, mlpO, k, n), mlpB/int64(n), mlpO),
			buf(rows(s.w1, mlpH, k, n), mlpD/int64(n), mlpH), buf(s.b1, mlpH),
			buf(rows(s.w2, mlpO, k, n), mlpH/int64(n), mlpO), buf(s.b2, mlpO)}
	}
	outs, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
	if err != nil {
		t.Fatal(err)
	}
	get := func(b *axle.Buffer) []float32 {
		v, err := axle.ToSlice[float32](b)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for k := range n {
		w1 = append(w1, get(outs[k][1])...)
		w2 = append(w2, get(outs[k][3])...)
		for i, o := range []int{0, 2, 4} {
			if fmt.Sprint(get(outs[k][o])) != fmt.Sprint(get(outs[0][o])) {
				t.Fatalf("%s on %d devices: device %d's replicated output %d differs from device 0's", backend, n, k, i)
			}
		}
	}
	return get(outs[0][0])[0], w1, get(outs[0][2]), w2, get(outs[0][4])
}

func TestShardedMLPStep(t *testing.T) {
	s := newMLPState(3)
	for _, backend := range []string{"interp", "cpu"} {
		l1, w11, b11, w21, b21 := runMLPStep(t, backend, 1, s)
		if l1 <= 0 || math.IsNaN(float64(l1)) {
			t.Fatalf("%s: single-device loss %v", backend, l1)
		}
		for _, n := range []int{2, 4, 8} {
			ln, w1n, b1n, w2n, b2n := runMLPStep(t, backend, n, s)
			where := fmt.Sprintf("%s, %d devices", backend, n)
			close32(t, where+": loss", []float32{ln}, []float32{l1})
			close32(t, where+": w1", w1n, w11)
			close32(t, where+": b1", b1n, b11)
			close32(t, where+": w2", w2n, w21)
			close32(t, where+": b2", b2n, b21)
			// The parameters moved: the comparison is not of untouched inputs.
			if fmt.Sprint(w1n) == fmt.Sprint(s.w1) || fmt.Sprint(b2n) == fmt.Sprint(s.b2) {
				t.Fatalf("%s: the step changed no parameter", where)
			}
		}
	}
}

// close32 compares within f32 reassociation error: sums over 16 terms
// regrouped across devices differ by a few ulps of their terms' size.
func close32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5+1e-5*math.Abs(float64(want[i])) {
			t.Fatalf("%s[%d] = %v, single device %v", what, i, got[i], want[i])
		}
	}
}

// The README's multi-device example is this step on 4 devices; keep the
// file and the generator in step (regenerate with AXLE_WRITE_EXAMPLES=1).
func TestShardedMLPExampleFile(t *testing.T) {
	const path = "examples/devices/mlp_step_4dev.hlo"
	want := shardedMLPStep(4)
	if os.Getenv("AXLE_WRITE_EXAMPLES") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s differs from shardedMLPStep(4): regenerate it with AXLE_WRITE_EXAMPLES=1 go test -run %s", path, t.Name())
	}
}
