package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Complex dots against the evaluator: random dimension numbers and
// layouts, every c64/c128 combination the verifier accepts, large and
// empty contractions.

// cplxRandomDot draws a dot's parameter shapes (with random layouts) and
// root text: up to two batch, two contracting and two free dimensions
// per operand, each in a random position.
func cplxRandomDot(rng *rand.Rand, lt, rt, ot string) (params []string, root string) {
	nb, nc, nlf, nrf := rng.IntN(3), rng.IntN(3), rng.IntN(3), rng.IntN(3)
	size := func() int64 { return int64(1 + rng.IntN(5)) }
	batch, contr := make([]int64, nb), make([]int64, nc)
	for i := range batch {
		batch[i] = size()
	}
	for i := range contr {
		contr[i] = size()
	}
	var outDims []int64
	outDims = append(outDims, batch...)
	side := func(nf int) (dims, bd, cd []int64) {
		kinds := make([]int, 0, nb+nc+nf) // 0 batch, 1 contracting, 2 free
		for range nb {
			kinds = append(kinds, 0)
		}
		for range nc {
			kinds = append(kinds, 1)
		}
		for range nf {
			kinds = append(kinds, 2)
		}
		rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		bd, cd = make([]int64, nb), make([]int64, nc)
		// Batch and contracting dimensions pair up in a random order.
		bo, co := rng.Perm(nb), rng.Perm(nc)
		bi, ci := 0, 0
		for d, k := range kinds {
			switch k {
			case 0:
				bd[bo[bi]] = int64(d)
				dims = append(dims, batch[bo[bi]])
				bi++
			case 1:
				cd[co[ci]] = int64(d)
				dims = append(dims, contr[co[ci]])
				ci++
			default:
				n := size()
				dims = append(dims, n)
				outDims = append(outDims, n)
			}
		}
		return dims, bd, cd
	}
	ld, lb, lc := side(nlf)
	rd, rb, rc := side(nrf)
	params = []string{lt + cplxShape(ld, rng), rt + cplxShape(rd, rng)}
	root = fmt.Sprintf("%s%s dot(p0, p1), lhs_batch_dims={%s}, lhs_contracting_dims={%s}, rhs_batch_dims={%s}, rhs_contracting_dims={%s}",
		ot, cplxDims(outDims), cplxInts(lb), cplxInts(lc), cplxInts(rb), cplxInts(rc))
	return params, root
}

// cplxShape is dims with a random layout.
func cplxShape(dims []int64, rng *rand.Rand) string {
	return fmt.Sprintf("%s{%s}", cplxDims(dims), cplxInts(func() []int64 {
		p := rng.Perm(len(dims))
		out := make([]int64, len(p))
		for i, v := range p {
			out[i] = int64(v)
		}
		return out
	}()))
}

func cplxDims(d []int64) string { return "[" + cplxInts(d) + "]" }

func cplxInts(d []int64) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ",")
}

// TestLowerDotComplexRandom: random dimension numbers and layouts over
// every combination of c64 and c128 operands and result the verifier
// accepts.
func TestLowerDotComplexRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	types := []string{"c64", "c128"}
	for _, lt := range types {
		for _, rt := range types {
			for _, ot := range types {
				ran := 0
				for range 60 {
					params, root := cplxRandomDot(rng, lt, rt, ot)
					if cplxParse(module(params, root)) == nil {
						continue
					}
					cplxRun(t, lowerDotComplex, params, root, rng)
					ran++
				}
				t.Logf("%s x %s -> %s: %d dots", lt, rt, ot, ran)
			}
		}
	}
}

// TestLowerDotComplexLarge: a matmul with enough rows to split, a batched
// one, and one whose contraction is empty (the result is zeros).
func TestLowerDotComplexLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	for _, c := range []struct {
		params []string
		root   string
	}{
		{[]string{"c64[96,70]", "c64[70,130]"}, "c64[96,130] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
		{[]string{"c128[4,33,20]{0,2,1}", "c128[4,17,20]"}, "c128[4,33,17] dot(p0, p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"},
		{[]string{"c64[5,0]", "c64[0,3]"}, "c64[5,3] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	} {
		cplxRun(t, lowerDotComplex, c.params, c.root, rng)
	}
}

// TestLowerDotComplexDeclines: real dots are not its business.
func TestLowerDotComplexDeclines(t *testing.T) {
	for _, c := range []struct {
		params []string
		root   string
	}{
		{[]string{"f32[2,3]", "f32[3,4]"}, "f32[2,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
		{[]string{"f64[2,3]", "f64[3,4]"}, "f64[2,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
	} {
		in := parseRoot(t, module(c.params, c.root))
		if _, ok := lowerDotComplex(in, 1); ok {
			t.Errorf("%s: compiled, want declined", in)
		}
	}
}

func BenchmarkComplexDot256(b *testing.B) {
	in := parseRootB(b, module([]string{"c64[256,256]", "c64[256,256]"},
		"c64[256,256] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
	benchKernel(b, lowerDotComplex, in, 3*256*256*8)
}
