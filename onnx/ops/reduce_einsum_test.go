package ops

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// esNaive evaluates an explicit einsum equation without ellipses by
// looping over every label assignment.
func esNaive(eq string, ins []*hlo.Literal) ([]float64, []int64) {
	lhs, rhs, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	size := map[byte]int64{}
	var labels []byte
	for i, t := range terms {
		for k := range len(t) {
			size[t[k]] = ins[i].Shape().Dims[k]
			if !slices.Contains(labels, t[k]) {
				labels = append(labels, t[k])
			}
		}
	}
	var outDims []int64
	for k := range len(rhs) {
		outDims = append(outDims, size[rhs[k]])
	}
	out := make([]float64, numElems(outDims))
	val := map[byte]int64{}
	var rec func(int)
	rec = func(d int) {
		if d == len(labels) {
			p := 1.0
			for i, t := range terms {
				idx := int64(0)
				for k := range len(t) {
					idx = idx*size[t[k]] + val[t[k]]
				}
				p *= ins[i].GetFloat64(int(idx))
			}
			idx := int64(0)
			for k := range len(rhs) {
				idx = idx*size[rhs[k]] + val[rhs[k]]
			}
			out[idx] += p
			return
		}
		for v := range size[labels[d]] {
			val[labels[d]] = v
			rec(d + 1)
		}
	}
	rec(0)
	return out, outDims
}

func testNode(op string, nIn int, attrs map[string]*onnxpb.AttributeProto) *onnx.Node {
	n := &onnx.Node{Op: op, Attrs: attrs, Outputs: []string{"y"}}
	for i := range nIn {
		n.Inputs = append(n.Inputs, string(rune('a'+i)))
	}
	return n
}

func randLit(r *rand.Rand, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.F64, dims...))
	for i := range l.Len() {
		l.SetFloat64(i, r.NormFloat64())
	}
	return l
}

func TestEinsumAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []struct {
		eq   string
		dims [][]int64
	}{
		{"ij,jk->ik", [][]int64{{2, 3}, {3, 4}}},
		{"ij,jk->ki", [][]int64{{2, 3}, {3, 4}}},
		{"bij,bjk->bik", [][]int64{{2, 2, 3}, {2, 3, 2}}},
		{"ii->i", [][]int64{{3, 3}}},
		{"ii->", [][]int64{{3, 3}}},
		{"iij->ji", [][]int64{{3, 3, 2}}},
		{"ij,ij->ij", [][]int64{{2, 3}, {2, 3}}},
		{"i,j->ij", [][]int64{{2}, {3}}},
		{"ijk,kl,lm->im", [][]int64{{2, 3, 2}, {2, 3}, {3, 2}}},
		{"ab,bc,ca->", [][]int64{{2, 3}, {3, 4}, {4, 2}}},
		{"abc,cd->abd", [][]int64{{2, 1, 3}, {3, 2}}},
		{"ij,jk,ik->ik", [][]int64{{2, 3}, {3, 2}, {2, 2}}},
		{"aab,bc->ca", [][]int64{{2, 2, 3}, {3, 2}}},
	}
	l := &Lowerer{Opsets: map[string]int{"": 12}}
	for _, tc := range cases {
		var ins []*hlo.Literal
		var ts []*onnx.Tensor
		for _, d := range tc.dims {
			lit := randLit(r, d...)
			ins = append(ins, lit)
			ts = append(ts, onnx.TensorOf(lit))
		}
		n := testNode("Einsum", len(ins), map[string]*onnxpb.AttributeProto{"equation": {S: []byte(tc.eq)}})
		got, err := l.Evaluate(n, ts)
		if err != nil {
			t.Fatalf("%s: %v", tc.eq, err)
		}
		want, wantDims := esNaive(tc.eq, ins)
		g := got[0].Lit
		if !slices.Equal(g.Shape().Dims, wantDims) && !(len(wantDims) == 0 && g.Shape().Rank() == 0) {
			t.Fatalf("%s: dims %v, want %v", tc.eq, g.Shape().Dims, wantDims)
		}
		for i, w := range want {
			if math.Abs(g.GetFloat64(i)-w) > 1e-9 {
				t.Fatalf("%s: element %d = %v, want %v", tc.eq, i, g.GetFloat64(i), w)
			}
		}
	}
	// Implicit output and ellipsis: "...ij,...jk" is a batched matmul.
	a, b := randLit(r, 2, 2, 3), randLit(r, 3, 4)
	n := testNode("Einsum", 2, map[string]*onnxpb.AttributeProto{"equation": {S: []byte("...ij,jk")}})
	got, err := l.Evaluate(n, []*onnx.Tensor{onnx.TensorOf(a), onnx.TensorOf(b)})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := esNaive("xij,jk->xik", []*hlo.Literal{a, b})
	for i, w := range want {
		if math.Abs(got[0].Lit.GetFloat64(i)-w) > 1e-9 {
			t.Fatalf("ellipsis: element %d = %v, want %v", i, got[0].Lit.GetFloat64(i), w)
		}
	}
}

func detNaive(a []float64, n int) float64 {
	if n == 1 {
		return a[0]
	}
	s := 0.0
	for j := range n {
		var minor []float64
		for i := 1; i < n; i++ {
			for k := range n {
				if k != j {
					minor = append(minor, a[i*n+k])
				}
			}
		}
		s += math.Pow(-1, float64(j)) * a[j] * detNaive(minor, n-1)
	}
	return s
}

func TestDetAgainstCofactors(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	l := &Lowerer{Opsets: map[string]int{"": 22}}
	for _, m := range []int64{1, 2, 3, 4, 5} {
		x := randLit(r, 3, m, m)
		// A singular matrix and one that needs a row swap.
		if m >= 2 {
			for k := range m {
				x.SetFloat64(int(m*m+m+k), x.GetFloat64(int(m*m+k)))
			}
			x.SetFloat64(int(2*m*m), 0)
		}
		got, err := l.Evaluate(testNode("Det", 1, nil), []*onnx.Tensor{onnx.TensorOf(x)})
		if err != nil {
			t.Fatal(err)
		}
		for b := range int64(3) {
			var a []float64
			for i := range m * m {
				a = append(a, x.GetFloat64(int(b*m*m+i)))
			}
			want := detNaive(a, int(m))
			if g := got[0].Lit.GetFloat64(int(b)); math.Abs(g-want) > 1e-9*max(1, math.Abs(want)) {
				t.Errorf("m=%d batch %d: det %v, want %v", m, b, g, want)
			}
		}
	}
}
