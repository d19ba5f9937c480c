package cpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// The single-device ops against the evaluator, module by module: each
// compiled executable (two threads, poisoned buffers, run twice so the
// second run reuses dirty buffers) must give the evaluator's value bit
// for bit, shapes and live sizes included, and leave nothing to it.

// identical fails unless got and want are the same value: same tuple
// structure, element types, dimensions, dynamic sizes and stored bytes
// (dead elements of dynamic arrays included).
func identical(t *testing.T, where string, got, want *hlo.Literal) {
	t.Helper()
	gs, ws := got.Shape(), want.Shape()
	switch {
	case gs.DType != ws.DType:
		t.Fatalf("%s: got %s, want %s", where, gs, ws)
	case ws.IsTuple():
		ge, we := got.Elements(), want.Elements()
		if len(ge) != len(we) {
			t.Fatalf("%s: got %s, want %s", where, gs, ws)
		}
		for i := range we {
			identical(t, fmt.Sprintf("%s{%d}", where, i), ge[i], we[i])
		}
	case ws.IsArray():
		if gs.HumanString() != ws.HumanString() {
			t.Fatalf("%s: got %s, want %s", where, gs.HumanString(), ws.HumanString())
		}
		for d := range ws.Rank() {
			if got.DynamicSize(d) != want.DynamicSize(d) {
				t.Fatalf("%s: dimension %d has %d live elements, want %d", where, d, got.DynamicSize(d), want.DynamicSize(d))
			}
		}
		if !bytes.Equal(bytesOf(got), bytesOf(want)) || !got.Equal(want) {
			t.Fatalf("%s: values differ:\ngot  %v\nwant %v", where, got, want)
		}
	}
}

// compileSingle parses text, compiles it and checks that it is compiled
// with nothing on the evaluator and each of hows used.
func compileSingle(t *testing.T, text string, threads int, hows ...string) (*hlo.Module, *Executable) {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatalf("verify: %v\n%s", err, text)
	}
	x, err := Compile(m, Options{Threads: threads, Poison: true})
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, text)
	}
	if x.Engine != "compiled" {
		t.Fatalf("engine %q\n%s", x.Engine, text)
	}
	if len(x.Fallbacks) > 0 {
		t.Fatalf("left to the evaluator: %v\n%s", x.Fallbacks, text)
	}
	for _, h := range hows {
		if x.Lowering[h] == 0 {
			t.Fatalf("nothing lowered as %q (lowering %v)\n%s", h, x.Lowering, text)
		}
	}
	return m, x
}

// runSingle compares the compiled module with the evaluator on args
// (random ones for nil).
func runSingle(t *testing.T, text string, args []*hlo.Literal, rng *rand.Rand, threads int, hows ...string) {
	t.Helper()
	m, x := compileSingle(t, text, threads, hows...)
	if args == nil {
		for _, in := range m.Entry.Instructions {
			if in.Opcode == hlo.OpParameter {
				for int(in.ParamNumber) >= len(args) {
					args = append(args, nil)
				}
				args[in.ParamNumber] = eval.RandomLiteral(in.Shape, rng)
			}
		}
	}
	want, err := eval.Run(m, args...)
	if err != nil {
		t.Fatalf("evaluator: %v\n%s", err, text)
	}
	for run := range 2 {
		got, err := x.Execute(args...)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, text)
		}
		identical(t, fmt.Sprintf("run %d of\n%s\nresult", run, text), got, want)
	}
}

// singleDeviceCases are entry bodies over parameters p0 (%[1]s, an array
// shape) and, where named, p1 (%[3]s[2]); %[2]s is a combiner of the
// element type. hows are the lowerings the case must use.
var singleDeviceCases = []struct{ hows, body string }{
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s all-reduce(p0), replica_groups={{0}}, to_apply=%[2]s`},
	{"collective", `p0 = %[1]s parameter(0)
  p1 = %[3]s[2] parameter(1)
  ROOT r = (%[1]s, %[3]s[2]) all-reduce(p0, p1), replica_groups={}, channel_id=3, to_apply=%[2]s`},
	{"collective", `p0 = %[1]s parameter(0)
  s = %[1]s all-reduce-start(p0), replica_groups={{0}}, to_apply=%[2]s
  ROOT d = %[1]s all-reduce-done(s)`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s all-gather(p0), dimensions={0}, replica_groups={{0}}`},
	{"collective", `p0 = %[1]s parameter(0)
  s = (%[1]s, %[1]s) all-gather-start(p0), dimensions={0}, replica_groups={{0}}
  ROOT d = %[1]s all-gather-done(s)`},
	{"collective", `p0 = %[1]s parameter(0)
  p1 = %[3]s[2] parameter(1)
  s = ((%[1]s, %[3]s[2]), (%[1]s, %[3]s[2])) all-gather-start(p0, p1), dimensions={0}, replica_groups={{0}}
  ROOT d = (%[1]s, %[3]s[2]) all-gather-done(s)`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s reduce-scatter(p0), dimensions={0}, replica_groups={{0}}, to_apply=%[2]s`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s all-to-all(p0), dimensions={0}, replica_groups={{0}}`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = (%[1]s) all-to-all(p0), replica_groups={{0}}`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s collective-broadcast(p0), replica_groups={{0}}`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s collective-permute(p0), source_target_pairs={{0,0}}, channel_id=1`},
	{"collective", `p0 = %[1]s parameter(0)
  ROOT r = %[1]s collective-permute(p0), source_target_pairs={{1,2},{0,1}}`},
	{"collective", `p0 = %[1]s parameter(0)
  p1 = %[3]s[2] parameter(1)
  ROOT r = (%[1]s, %[3]s[2]) collective-permute(p0, p1), source_target_pairs={{1,2}}`},
	{"collective", `p0 = %[1]s parameter(0)
  s = (%[1]s, %[1]s, u32[], u32[]) collective-permute-start(p0), source_target_pairs={{0,0}}
  ROOT d = %[1]s collective-permute-done(s)`},
	{"collective", `p0 = %[1]s parameter(0)
  s = (%[1]s, %[1]s, u32[], u32[]) collective-permute-start(p0), source_target_pairs={{2,3}}
  d = %[1]s collective-permute-done(s)
  ROOT t = (%[1]s) tuple(d)`},
	{"opt-barrier", `p0 = %[1]s parameter(0)
  p1 = %[3]s[2] parameter(1)
  t = (%[1]s, %[3]s[2]) tuple(p0, p1)
  b = (%[1]s, %[3]s[2]) opt-barrier(t)
  g = %[1]s get-tuple-element(b), index=0
  ROOT o = %[1]s opt-barrier(g)`},
	{"domain", `p0 = %[1]s parameter(0)
  ROOT d = %[1]s domain(p0), domain={kind="sharding", entry={replicated}, exit={maximal device=0}}`},
	{"add-dependency after-all", `p0 = %[1]s parameter(0)
  p1 = token[] parameter(1)
  a = token[] after-all(p1, p1)
  d = %[1]s add-dependency(p0, a)
  ROOT t = (%[1]s, token[]) tuple(d, a)`},
	{"after-all", `ROOT a = token[] after-all()`},
	{"copy-start copy-done", `p0 = %[1]s parameter(0)
  s = (%[1]s, %[1]s, u32[]) copy-start(p0)
  ROOT d = %[1]s copy-done(s)`},
	{"copy", `p0 = %[1]s parameter(0)
  p1 = %[3]s[2] parameter(1)
  t = (%[1]s, %[3]s[2]) tuple(p0, p1)
  ROOT c = (%[1]s, %[3]s[2]) copy(t)`},
	{"async-start async-update async-done", `p0 = %[1]s parameter(0)
  s = ((%[1]s), %[1]s, s32[]) async-start(p0), calls=wrapped
  u = ((%[1]s), %[1]s, s32[]) async-update(s), calls=wrapped
  ROOT d = %[1]s async-done(u), calls=wrapped`},
	{"custom-call:Sharding custom-call:LayoutConstraint custom-call:MoveToHost", `p0 = %[1]s parameter(0)
  s = %[1]s custom-call(p0), custom_call_target="Sharding", sharding={replicated}
  h = %[1]s custom-call(s), custom_call_target="MoveToHost"
  ROOT l = %[1]s custom-call(h), custom_call_target="LayoutConstraint"`},
	{"custom-call:AllocateBuffer", `ROOT b = %[1]s custom-call(), custom_call_target="AllocateBuffer"`},
	{"get-dimension-size", `p0 = %[1]s parameter(0)
  ROOT d = s32[] get-dimension-size(p0), dimensions={0}`},
	{"replica-id partition-id", `r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)`},
}

// wrappedComp is the computation the async cases wrap: a reverse, which
// every element type has.
func wrappedComp(shape string) string {
	return fmt.Sprintf("wrapped {\n  x = %s parameter(0)\n  ROOT r = %s reverse(x), dimensions={0}\n}", shape, shape)
}

func singleDeviceModule(body, shape string, dt hlo.DType) string {
	if strings.Contains(body, "%[") { // (Sprintf would note unused arguments)
		body = fmt.Sprintf(body, shape, "overwrite_"+dt.String(), dt)
	}
	return fmt.Sprintf("HloModule m\n%s\n%s\nENTRY e {\n  %s\n}\n", combiner("overwrite", dt), wrappedComp(shape), body)
}

// TestLowerSingleDevice runs every case over every storage width and
// several shapes: layouts other than the default, an empty array, and
// one big enough that copies are split across threads.
func TestLowerSingleDevice(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	types := append([]hlo.DType{hlo.S4, hlo.F8E4M3FN, hlo.U64, hlo.C64}, moveTypes...)
	dims := []string{"[7]", "[3,5]{0,1}", "[2,3,4]{1,2,0}", "[0,4]"}
	for _, c := range singleDeviceCases {
		for _, dt := range types {
			for _, d := range dims {
				shape, hows := dt.String()+d, strings.Fields(c.hows)
				if strings.Contains(d, "0,") {
					hows = nil // empty arrays are folded to constants
				}
				runSingle(t, singleDeviceModule(c.body, shape, dt), nil, rng, 2, hows...)
			}
		}
		shape := "f32[701,401]{0,1}" // 281101 elements: split across threads, with a ragged end
		for threads := 1; threads <= 3; threads++ {
			runSingle(t, singleDeviceModule(c.body, shape, hlo.F32), nil, rng, threads, strings.Fields(c.hows)...)
		}
	}
}

// dynamicCases work on p0 = %[1]s[8,6] and s32 sizes p1, p2.
var dynamicCases = []struct{ hows, body string }{
	{"set-dimension-size get-dimension-size", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[<=8,6] set-dimension-size(p0, p1), dimensions={0}
  g = s32[] get-dimension-size(s), dimensions={0}
  ROOT t = (%[1]s[<=8,6], s32[]) tuple(s, g)`},
	{"set-dimension-size dynamic-reshape", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[<=8,6] set-dimension-size(p0, p1), dimensions={0}
  three = s32[] constant(3)
  ROOT r = %[1]s[<=16,3] dynamic-reshape(s, p2, three)`},
	{"set-dimension-size", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[<=8,6] set-dimension-size(p0, p1), dimensions={0}
  ROOT t = %[1]s[<=8,<=6] set-dimension-size(s, p2), dimensions={1}`},
	{"set-dimension-size dynamic-reshape", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[8,<=6] set-dimension-size(p0, p1), dimensions={1}
  eight = s32[] constant(8)
  ROOT r = %[1]s[<=8,<=6] dynamic-reshape(s, eight, p1)`},
	{"set-dimension-size dynamic-reshape", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[8,<=6] set-dimension-size(p0, p1), dimensions={1}
  eight = s32[] constant(8)
  ROOT r = %[1]s[<=6,8] dynamic-reshape(s, p1, eight)`},
	{"set-dimension-size custom-call:PadToStatic", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  s = %[1]s[8,<=6] set-dimension-size(p0, p1), dimensions={1}
  ROOT p = (%[1]s[8,6], s32[], s32[]) custom-call(s), custom_call_target="PadToStatic"`},
	{"custom-call:SliceToDynamic", `p0 = %[1]s[8,6] parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  ROOT s = %[1]s[<=8,<=6] custom-call(p0, p2, p1), custom_call_target="SliceToDynamic"`},
}

// TestLowerSingleDeviceDynamic: live sizes drawn so every reshape is
// valid (p2·3 = p1·6 needs p2 = 2·p1).
func TestLowerSingleDeviceDynamic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range dynamicCases {
		for _, dt := range append([]hlo.DType{hlo.S4}, moveTypes...) {
			for n := range 7 {
				text := fmt.Sprintf("HloModule m\nENTRY e {\n  %s\n}\n", fmt.Sprintf(c.body, dt))
				p0 := eval.RandomLiteral(hlo.ArrayShape(dt, 8, 6), rng)
				n1 := int32(n)
				args := []*hlo.Literal{p0, hlo.ScalarLiteral(n1), hlo.ScalarLiteral(2 * n1)}
				if !strings.Contains(c.body, "p2, three") {
					args[2] = hlo.ScalarLiteral(int32(rng.IntN(7)))
				}
				runSingle(t, text, args, rng, 2, strings.Fields(c.hows)...)
			}
		}
	}
}

// TestLowerSingleDeviceErrors: what the evaluator refuses at run time,
// the compiled module refuses too; what it refuses whatever the values
// is left to it, and reported.
func TestLowerSingleDeviceErrors(t *testing.T) {
	_, x := compileSingle(t, `HloModule m
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT r = f32[4] collective-permute(p0), source_target_pairs={{1,0}}
}`, 2, "collective")
	p, _ := hlo.LiteralFromSlice([]float32{1, 2, 3, 4})
	if _, err := x.Execute(p); err == nil || !strings.Contains(err.Error(), "from replica 1 to 0") {
		t.Fatalf("permute from another replica: err = %v", err)
	}
	text := `HloModule m
ENTRY e {
  p0 = f32[8,6] parameter(0)
  p1 = s32[] parameter(1)
  s = f32[<=8,6] set-dimension-size(p0, p1), dimensions={0}
  ROOT r = f32[<=8,<=6] dynamic-reshape(s, p1, p1)
}`
	_, x = compileSingle(t, text, 2, "dynamic-reshape")
	if _, err := x.Execute(hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 8, 6)), hlo.ScalarLiteral(int32(9))); err == nil {
		t.Fatal("size 9 of a dimension bounded by 8: no error")
	}
	if _, err := x.Execute(hlo.NewLiteral(hlo.ArrayShape(hlo.F32, 8, 6)), hlo.ScalarLiteral(int32(5))); err == nil ||
		!strings.Contains(err.Error(), "30 live elements") {
		t.Fatalf("reshape of 30 elements to 5x5: err = %v", err)
	}
	// A collective over several devices compiles to the collective
	// kernel (no evaluator fallback); run as a single device it says it
	// needs the others.
	for _, text := range []string{`HloModule m, replica_count=2
ENTRY e {
  p0 = f32[2] parameter(0)
  ROOT ag = f32[4] all-gather(p0), dimensions={0}, replica_groups={{0,1}}
}`, `HloModule m, replica_count=2
wrapped {
  x = f32[2] parameter(0)
  ROOT s = f32[4] all-gather(x), dimensions={0}, replica_groups={{0,1}}
}
ENTRY e {
  p0 = f32[2] parameter(0)
  s = ((f32[2]), f32[4], s32[]) async-start(p0), calls=wrapped
  ROOT d = f32[4] async-done(s), calls=wrapped
}`} {
		m, err := hlotext.Parse(text, hlotext.Options{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := Compile(m, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Fallbacks) != 0 {
			t.Fatalf("fallbacks %v", x.Fallbacks)
		}
		p, _ := hlo.LiteralFromSlice([]float32{1, 2})
		if _, err := x.Execute(p); err == nil || !strings.Contains(err.Error(), "needs several devices") {
			t.Fatalf("all-gather of 2 replicas on one device: err = %v", err)
		}
	}
}

// TestLowerSingleDeviceIDs runs the kernels with an evaluator that is
// another replica and partition: ids are read from it, and a permute
// pair {1,1} is then this replica's own value while {0,0} gives zeros.
func TestLowerSingleDeviceIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ev := eval.Evaluator{ReplicaID: 1, PartitionID: 3}
	for _, root := range []string{
		"u32[] replica-id()", "u32[] partition-id()",
		"f32[5,3] collective-permute(p0), source_target_pairs={{1,1}}",
		"f32[5,3] collective-permute(p0), source_target_pairs={{0,0}}",
		"(f32[5,3], f32[5,3], u32[]) collective-permute-start(p0), source_target_pairs={{0,0},{1,1}}",
	} {
		in := parseRoot(t, module([]string{"f32[5,3]"}, root))
		k, _, ok := lowerSingleDevice(in, 2)
		if !ok {
			t.Fatalf("%s: declined", in)
		}
		ops := randomOperands(in, rng)
		want, err := ev.Instruction(in, ops)
		if err != nil {
			t.Fatal(err)
		}
		var out *hlo.Literal
		if in.Shape.IsArray() {
			out = poisoned(in.Shape)
		}
		got, err := k(&runState{ReplicaID: 1, PartitionID: 3}, out, ops)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if out != nil && got != out {
			t.Fatalf("%s: wrote a literal of its own, not its buffer", in)
		}
		identical(t, in.String(), got, want)
	}
}

// singleDeviceOps are the opcodes lowerSingleDevice takes.
var singleDeviceOps = map[hlo.Opcode]bool{
	hlo.OpAllReduce: true, hlo.OpAllReduceStart: true, hlo.OpAllReduceDone: true, hlo.OpAllGather: true,
	hlo.OpAllGatherStart: true, hlo.OpAllGatherDone: true, hlo.OpReduceScatter: true, hlo.OpAllToAll: true,
	hlo.OpCollectiveBroadcast: true, hlo.OpCollectivePermute: true, hlo.OpCollectivePermuteStart: true,
	hlo.OpCollectivePermuteDone: true, hlo.OpReplicaID: true, hlo.OpPartitionID: true,
	hlo.OpGetDimensionSize: true, hlo.OpSetDimensionSize: true, hlo.OpOptimizationBarrier: true,
	hlo.OpAddDependency: true, hlo.OpAfterAll: true, hlo.OpDomain: true, hlo.OpCopyStart: true,
	hlo.OpCopyDone: true, hlo.OpAsyncStart: true, hlo.OpAsyncUpdate: true, hlo.OpAsyncDone: true,
	hlo.OpCustomCall: true, hlo.OpDynamicReshape: true, hlo.OpRngGetAndUpdateState: true,
}

// TestSingleDeviceConformance compiles the shared cases that use these
// ops and compares them with the evaluator (the suites have none today:
// the test says so in its log).
func TestSingleDeviceConformance(t *testing.T) {
	files, err := conformance.FindCases("/work/shared/conformance/cases", "/work/shared/conformance/xla-tests")
	if err != nil {
		t.Skipf("no shared cases: %v", err)
	}
	found := 0
	for _, f := range files {
		c, err := conformance.LoadCase(f)
		if err != nil {
			continue
		}
		m, err := hlotext.Parse(c.HLO, hlotext.Options{})
		if err != nil || hlo.Verify(m) != nil {
			continue
		}
		uses := false
		for _, comp := range m.Computations {
			for _, in := range comp.Instructions {
				uses = uses || singleDeviceOps[in.Opcode]
			}
		}
		if !uses {
			continue
		}
		found++
		args := make([]*hlo.Literal, len(c.Args))
		for i, a := range c.Args {
			if args[i], err = a.Literal(); err != nil {
				t.Fatalf("%s: %v", c.Path, err)
			}
		}
		runSingle(t, c.HLO, args, nil, 2)
	}
	t.Logf("%d shared cases use single-device ops", found)
}

// BenchmarkSingleDevice: an all-reduce of f32[1024,1024] (4 MiB) and a
// dynamic-reshape of f32[<=512,512] live 500 rows, compiled kernel
// against the evaluator (plus, for the all-reduce, the executor's copy of
// its result into the buffer, which the fallback pays).
func BenchmarkSingleDevice(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name, text string
		args       func() []*hlo.Literal
	}{
		{"all-reduce", module([]string{"f32[1024,1024]"}, "f32[1024,1024] all-reduce(p0), replica_groups={{0}}, to_apply=overwrite_f32",
			combiner("overwrite", hlo.F32)), func() []*hlo.Literal {
			return []*hlo.Literal{eval.RandomLiteral(hlo.ArrayShape(hlo.F32, 1024, 1024), rng)}
		}},
		{"dynamic-reshape", module([]string{"f32[<=512,512]", "s32[]", "s32[]"}, "f32[<=1024,256] dynamic-reshape(p0, p1, p2)"),
			func() []*hlo.Literal {
				x := eval.RandomLiteral(hlo.ArrayShape(hlo.F32, 512, 512), rng)
				d, _ := hlo.NewLiteralFromData(hlo.Shape{DType: hlo.F32, Dims: []int64{512, 512}, Dynamic: []bool{true, false}}, x.Data())
				_ = d.SetDynamicSize(0, 500)
				return []*hlo.Literal{d, hlo.ScalarLiteral(int32(1000)), hlo.ScalarLiteral(int32(256))}
			}},
	} {
		in := parseRootB(b, c.text)
		ops := c.args()
		var out *hlo.Literal
		if arrayBytes(in.Shape) > 0 {
			out = hlo.NewLiteral(in.Shape)
		}
		var ev eval.Evaluator
		for _, threads := range []int{1, 2} {
			k, _, ok := lowerSingleDevice(in, threads)
			if !ok {
				b.Fatalf("%s: declined", c.name)
			}
			b.Run(fmt.Sprintf("%s/kernel-threads%d", c.name, threads), func(b *testing.B) {
				for b.Loop() {
					if _, err := k(&runState{}, out, ops); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(c.name+"/evaluator", func(b *testing.B) {
			for b.Loop() {
				v, err := ev.Instruction(in, ops)
				if err != nil {
					b.Fatal(err)
				}
				if out != nil {
					if err := copyValue(out, v); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
