package stablehlo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// transformerModule writes a StableHLO module of at least ops ops in the
// entry as JAX prints a stack of transformer-style blocks on a [16, 64]
// activation: layer norm (reductions with the pretty and the generic
// region syntax, broadcast_in_dim, rsqrt), a dense layer (dot_general,
// bias), a tanh GELU with splat constants, a softmax and the residual
// add. It returns the text and the number of ops written.
func transformerModule(ops int) (string, int) {
	var b strings.Builder
	n := 0
	v := 0
	next := func() string { v++; return fmt.Sprintf("%%%d", v) }
	emit := func(format string, args ...any) string {
		name := next()
		fmt.Fprintf(&b, "    %s = "+format+"\n", append([]any{name}, args...)...)
		n++
		return name
	}
	const (
		act = "tensor<16x64xf32>"
		row = "tensor<16xf32>"
		sc  = "tensor<f32>"
	)
	b.WriteString("module @jit_block attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n")
	b.WriteString("  func.func public @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>, %bias: tensor<64xf32>) -> (tensor<16x64xf32> {jax.result_info = \"\"}) {\n")
	x := "%x"
	for n < ops {
		zero := emit("stablehlo.constant dense<0.000000e+00> : %s", sc)
		ninf := emit("stablehlo.constant dense<0xFF800000> : %s", sc)
		width := emit("stablehlo.constant dense<6.400000e+01> : %s", sc)
		sum := emit("stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [1] : (%s, %s) -> %s", x, zero, act, sc, row)
		wb := emit("stablehlo.broadcast_in_dim %s, dims = [] : (%s) -> %s", width, sc, row)
		mean := emit("stablehlo.divide %s, %s : %s", sum, wb, row)
		mb := emit("stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s", mean, row, act)
		cen := emit("stablehlo.subtract %s, %s : %s", x, mb, act)
		sq := emit("stablehlo.multiply %s, %s : %s", cen, cen, act)
		ss := emit("stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [1] : (%s, %s) -> %s", sq, zero, act, sc, row)
		vr := emit("stablehlo.divide %s, %s : %s", ss, wb, row)
		eps := emit("stablehlo.constant dense<9.99999974E-6> : %s", row)
		ve := emit("stablehlo.add %s, %s : %s", vr, eps, row)
		rs := emit("stablehlo.rsqrt %s : %s", ve, row)
		rb := emit("stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s", rs, row, act)
		nrm := emit("stablehlo.multiply %s, %s : %s", cen, rb, act)
		mm := emit("stablehlo.dot_general %s, %%w, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (%s, tensor<64x64xf32>) -> %s", nrm, act, act)
		bb := emit("stablehlo.broadcast_in_dim %%bias, dims = [1] : (tensor<64xf32>) -> %s", act)
		h := emit("stablehlo.add %s, %s : %s", mm, bb, act)
		h2 := emit("stablehlo.multiply %s, %s : %s", h, h, act)
		h3 := emit("stablehlo.multiply %s, %s : %s", h2, h, act)
		k := emit("stablehlo.constant dense<4.471500e-02> : %s", act)
		hk := emit("stablehlo.multiply %s, %s : %s", h3, k, act)
		in := emit("stablehlo.add %s, %s : %s", h, hk, act)
		th := emit("stablehlo.tanh %s : %s", in, act)
		one := emit("stablehlo.constant dense<1.000000e+00> : %s", act)
		t1 := emit("stablehlo.add %s, %s : %s", th, one, act)
		half := emit("stablehlo.constant dense<5.000000e-01> : %s", act)
		g := emit("stablehlo.multiply %s, %s : %s", h, t1, act)
		gh := emit("stablehlo.multiply %s, %s : %s", g, half, act)
		mx := next()
		fmt.Fprintf(&b, "    %s = stablehlo.reduce(%s init: %s) across dimensions = [1] : (%s, %s) -> %s\n", mx, gh, ninf, act, sc, row)
		fmt.Fprintf(&b, "     reducer(%%a: %s, %%c: %s)  {\n      %%m = stablehlo.maximum %%a, %%c : %s\n      stablehlo.return %%m : %s\n    }\n", sc, sc, sc, sc)
		n++
		mxb := emit("stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s", mx, row, act)
		sh := emit("stablehlo.subtract %s, %s : %s", gh, mxb, act)
		ex := emit("stablehlo.exponential %s : %s", sh, act)
		den := emit("stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [1] : (%s, %s) -> %s", ex, zero, act, sc, row)
		db := emit("stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s", den, row, act)
		sm := emit("stablehlo.divide %s, %s : %s", ex, db, act)
		x = emit("stablehlo.add %s, %s : %s", x, sm, act)
	}
	fmt.Fprintf(&b, "    return %s : %s\n  }\n}\n", x, act)
	return b.String(), n
}

// importModule parses and converts text and verifies the result.
func importModule(text string) (*hlo.Module, error) {
	src, err := mlir.Parse("block.mlir", []byte(text))
	if err != nil {
		return nil, err
	}
	m, err := Convert(src, Options{})
	if err != nil {
		return nil, err
	}
	return m, hlo.Verify(m)
}

// TestTransformerModule: the benchmark's module imports and verifies, and
// has the op count it claims.
func TestTransformerModule(t *testing.T) {
	text, n := transformerModule(1000)
	if n < 1000 || n > 1040 {
		t.Fatalf("%d ops, want 1000 to 1040", n)
	}
	// Each reducer region holds one op more.
	if got := strings.Count(text, " = stablehlo."); got != n+strings.Count(text, "reducer(") {
		t.Fatalf("text holds %d ops, generator says %d", got, n)
	}
	if _, err := importModule(text); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkImport1000Ops parses a 1,000-op StableHLO module (a stack of
// transformer-style blocks) and converts it to a verified hlo.Module.
// Target: ≤ 20 ms per import on one core (-cpu 1).
func BenchmarkImport1000Ops(b *testing.B) {
	text, _ := transformerModule(1000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := importModule(text); err != nil {
			b.Fatal(err)
		}
	}
}
