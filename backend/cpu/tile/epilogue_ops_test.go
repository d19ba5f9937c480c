package tile

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// opsFusion is a kOutput fusion of a dot (x·w, 6×8 by 8×16) and the
// epilogue body %[1]s, which reads the product d, biases b[16] and c[16],
// a residual r[6,16] and a vector v[6] and defines ROOT; %[2]s is the
// constant z's value.
const opsFusion = `HloModule ops
fused {
  x = f32[6,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  r = f32[6,16] parameter(3)
  v = f32[6] parameter(4)
  c = f32[16] parameter(5)
  d = f32[6,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[6,16] broadcast(b), dimensions={1}
  cb = f32[6,16] broadcast(c), dimensions={1}
  vb = f32[6,16] broadcast(v), dimensions={0}
  z = f32[] constant(%[2]s)
  zb = f32[6,16] broadcast(z), dimensions={}
%[1]s
}
ENTRY e {
  x = f32[6,8] parameter(0)
  w = f32[8,16] parameter(1)
  b = f32[16] parameter(2)
  r = f32[6,16] parameter(3)
  v = f32[6] parameter(4)
  c = f32[16] parameter(5)
  ROOT f = f32[6,16] fusion(x, w, b, r, v, c), kind=kOutput, calls=fused
}`

// TestEpilogueOps checks which epilogues are kernels.TileOps and with
// which flags and operands: the bias, residual and floor in the product's
// order, either operand order of each add; and the ones that are not
// (an op out of order, a bias along the columns, a NaN floor, a maximum
// with the constant first, another op).
func TestEpilogueOps(t *testing.T) {
	const (
		bias, biasFirst = kernels.OpsBias, kernels.OpsBias | kernels.OpsBiasFirst
		res, resFirst   = kernels.OpsRes, kernels.OpsRes | kernels.OpsResFirst
		floor           = kernels.OpsFloor
		ceil            = kernels.OpsCeil
		resBias         = kernels.OpsResBias
		resBiasFirst    = kernels.OpsResBias | kernels.OpsResBiasFirst
	)
	for _, c := range []struct {
		body, floor string
		flags       int // 0: not TileOps
	}{
		{"  ROOT o = f32[6,16] add(d, bb)", "0", bias},
		{"  ROOT o = f32[6,16] add(bb, d)", "0", biasFirst},
		{"  ROOT o = f32[6,16] maximum(d, zb)", "0", floor},
		{"  ROOT o = f32[6,16] add(r, d)", "0", resFirst},
		{"  s = f32[6,16] add(bb, d)\n  t = f32[6,16] add(s, r)\n  ROOT o = f32[6,16] maximum(t, zb)", "0", biasFirst | res | floor},
		{"  s = f32[6,16] add(d, bb)\n  t = f32[6,16] add(r, s)\n  ROOT o = f32[6,16] maximum(t, zb)", "-1.5", bias | resFirst | floor},
		{"  s = f32[6,16] add(d, bb)\n  ROOT o = f32[6,16] maximum(s, zb)", "0", bias | floor},
		// A stage's first block: the residual with a bias of its own.
		{"  s = f32[6,16] add(d, bb)\n  q = f32[6,16] add(r, cb)\n  t = f32[6,16] add(q, s)\n  ROOT o = f32[6,16] maximum(t, zb)", "0", bias | resFirst | resBias | floor},
		{"  q = f32[6,16] add(cb, r)\n  ROOT o = f32[6,16] add(d, q)", "0", res | resBiasFirst},
		// ReLU6: a clamp with constant bounds, or a minimum over the
		// maximum (z is the ceiling alone in the last).
		{"  s = f32[6,16] add(d, bb)\n  six = f32[] constant(6)\n  ROOT o = f32[6,16] clamp(z, s, six)", "0", bias | floor | ceil},
		{"  s = f32[6,16] add(d, bb)\n  m = f32[6,16] maximum(s, zb)\n  six = f32[] constant(6)\n  sb = f32[6,16] broadcast(six), dimensions={}\n  ROOT o = f32[6,16] minimum(m, sb)", "0", bias | floor | ceil},
		{"  ROOT o = f32[6,16] minimum(d, zb)", "6", ceil},
		// Not of the form.
		{"  s = f32[6,16] add(d, bb)\n  six = f32[] constant(nan)\n  ROOT o = f32[6,16] clamp(z, s, six)", "0", 0}, // a NaN bound
		{"  s = f32[6,16] add(d, bb)\n  ROOT o = f32[6,16] clamp(z, s, z)", "nan", 0},                              // NaN bounds
		{"  ROOT o = f32[6,16] minimum(zb, d)", "6", 0},                                                            // the constant first
		{"  s = f32[6,16] add(d, r)\n  ROOT o = f32[6,16] add(s, bb)", "0", 0},                                     // residual before bias
		{"  ROOT o = f32[6,16] add(d, vb)", "0", 0},                                                                // a bias along the columns
		{"  ROOT o = f32[6,16] maximum(d, zb)", "nan", 0},                                                          // a NaN floor
		{"  ROOT o = f32[6,16] maximum(zb, d)", "0", 0},                                                            // the constant first
		{"  s = f32[6,16] add(d, bb)\n  ROOT o = f32[6,16] multiply(s, zb)", "0", 0},                               // another op
		{"  s = f32[6,16] maximum(d, zb)\n  ROOT o = f32[6,16] add(s, bb)", "0", 0},                                // the floor first
		{"  q = f32[6,16] add(r, vb)\n  ROOT o = f32[6,16] add(d, q)", "0", 0},                                     // a residual's bias along the columns
		{"  q = f32[6,16] add(r, r)\n  ROOT o = f32[6,16] add(d, q)", "0", 0},                                      // a residual's other sum
	} {
		m, err := hlotext.Parse(fmt.Sprintf(opsFusion, c.body, c.floor), hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := epilogueOf(t, m.Entry.Root)
		args := make([]*hlo.Literal, 6)
		for i, p := range m.Entry.Root.Operands {
			args[i] = hlo.NewLiteral(p.Shape)
		}
		out := make([]float32, 6*16)
		ops := e.BindOps(args, out, 16)
		if c.flags == 0 {
			if ops != nil {
				t.Errorf("%q: TileOps with flags %05b, want none", c.body, ops.Flags)
			}
			continue
		}
		if ops == nil || ops.Flags != c.flags {
			t.Errorf("%q: TileOps %+v, want flags %05b", c.body, ops, c.flags)
			continue
		}
		if c.flags&bias != 0 && &ops.Bias[0] != &args[2].Data().([]float32)[0] ||
			c.flags&res != 0 && (&ops.Res[0] != &args[3].Data().([]float32)[0] || ops.LdRes != 16) ||
			c.flags&resBias != 0 && &ops.ResBias[0] != &args[5].Data().([]float32)[0] ||
			c.flags&floor != 0 && fmt.Sprint(ops.Floor) != c.floor ||
			c.flags&ceil != 0 && c.flags&floor != 0 && ops.Ceil != 6 || c.flags == ceil && fmt.Sprint(ops.Ceil) != c.floor {
			t.Errorf("%q: TileOps %+v: not the fusion's operands", c.body, ops)
		}
	}
}
