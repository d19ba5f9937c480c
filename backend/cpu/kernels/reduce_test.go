package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A 16M-element sum must stay close to the float64 sum; a plain float32
// running sum of the same data is off by about 2e-2 relative.
func TestSumF32Long(t *testing.T) {
	if testing.Short() {
		t.Skip("16M elements")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 16<<20)
	var want, abs float64
	for i := range x {
		x[i] = rng.Float32()
		if i%3 == 0 {
			x[i] = -x[i] / 4
		}
		want += float64(x[i])
		abs += math.Abs(float64(x[i]))
	}
	var naive float32
	for _, v := range x {
		naive += v
	}
	withKernels(t, func(t *testing.T) {
		got := SumF32(x)
		rel := math.Abs(float64(got)-want) / abs
		t.Logf("sum %v, float64 %v: error %.2g of Σ|x| (naive float32 loop %.2g)", got, want, rel,
			math.Abs(float64(naive)-want)/abs)
		if rel > 1e-6 {
			t.Errorf("SumF32 = %v, want %v (relative error %g)", got, want, rel)
		}
	})
}

func TestSumMaxMinShort(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		for n := range 80 {
			x := make([]float32, n)
			var sum float64
			mx, mn := math.Inf(-1), math.Inf(1)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				sum += float64(x[i])
				mx, mn = max(mx, float64(x[i])), min(mn, float64(x[i]))
			}
			if got := SumF32(x); !(math.Abs(float64(got)-sum) <= 1e-5*(1+math.Abs(sum))) {
				t.Errorf("n=%d: SumF32 = %v, want %v", n, got, sum)
			}
			if got := MaxF32(x); float64(got) != mx {
				t.Errorf("n=%d: MaxF32 = %v, want %v", n, got, mx)
			}
			if got := MinF32(x); float64(got) != mn {
				t.Errorf("n=%d: MinF32 = %v, want %v", n, got, mn)
			}
			// A NaN anywhere, including first, last and in the tail, wins.
			for i := range n {
				y := append([]float32(nil), x...)
				y[i] = float32(math.NaN())
				if got := MaxF32(y); got == got {
					t.Fatalf("n=%d NaN at %d: MaxF32 = %v", n, i, got)
				}
				if got := MinF32(y); got == got {
					t.Fatalf("n=%d NaN at %d: MinF32 = %v", n, i, got)
				}
			}
		}
		inf := float32(math.Inf(1))
		if MaxF32(nil) != -inf || MinF32(nil) != inf {
			t.Errorf("empty: Max %v, Min %v", MaxF32(nil), MinF32(nil))
		}
		x := []float32{1, -inf, 3, inf, 2, 0, 0, 0, 0, 0, 0}
		if MaxF32(x) != inf || MinF32(x) != -inf {
			t.Errorf("infinities: Max %v, Min %v", MaxF32(x), MinF32(x))
		}
	})
}

func TestRowColReductions(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 3))
		for _, sz := range [][2]int{{0, 5}, {5, 0}, {1, 1}, {3, 7}, {7, 8}, {17, 33}, {300, 9}, {600, 40}, {2, 5000}} {
			rows, cols := sz[0], sz[1]
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			if rows > 1 && cols > 1 {
				x[cols+1] = float32(math.NaN()) // row 1, column 1
			}
			rs, rm := make([]float32, rows), make([]float32, rows)
			cs, cm := make([]float32, cols), make([]float32, cols)
			SumRowsF32(rs, x, rows, cols)
			MaxRowsF32(rm, x, rows, cols)
			SumColsF32(cs, x, rows, cols)
			MaxColsF32(cm, x, rows, cols)
			at := func(i, j int) float64 { return float64(x[i*cols+j]) }
			for i := range rows {
				s, m := 0.0, math.Inf(-1)
				for j := range cols {
					s, m = s+at(i, j), max(m, at(i, j))
				}
				checkReduce(t, "SumRows", rows, cols, i, rs[i], s)
				checkReduce(t, "MaxRows", rows, cols, i, rm[i], m)
			}
			for j := range cols {
				s, m := 0.0, math.Inf(-1)
				for i := range rows {
					s, m = s+at(i, j), max(m, at(i, j))
				}
				checkReduce(t, "SumCols", rows, cols, j, cs[j], s)
				checkReduce(t, "MaxCols", rows, cols, j, cm[j], m)
			}
		}
	})
}

func checkReduce(t *testing.T, name string, rows, cols, i int, got float32, want float64) {
	t.Helper()
	if math.IsNaN(want) != (got != got) || math.Abs(float64(got)-want) > 1e-5*(1+math.Abs(want)) {
		t.Errorf("%s %dx%d [%d] = %v, want %v", name, rows, cols, i, got, want)
	}
}

// AccumulateColsF32 adds the rows in order, so every column's sum has the
// bits of the plain loop's, for every width (the 32-, 16- and 8-column
// kernels and the rest) and a stride wider than the columns.
func TestAccumulateColsF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for _, width := range []int{1, 7, 8, 9, 16, 24, 31, 32, 33, 56, 70} {
		for _, rows := range []int{0, 1, 5, 300} {
			stride := width + 3
			src := make([]float32, rows*stride)
			for i := range src {
				src[i] = float32(rng.NormFloat64() * 1e3)
			}
			got, want := make([]float32, width), make([]float32, width)
			for j := range got {
				got[j] = float32(j) * 0.1
				want[j] = got[j]
			}
			AccumulateColsF32(got, src, rows, stride)
			for i := range rows {
				for j := range want {
					want[j] += src[i*stride+j]
				}
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("width %d rows %d: column %d is %v, want %v", width, rows, j, got[j], want[j])
				}
			}
		}
	}
}

// The row folds give, row by row, the bits of SumF32, MaxF32 and MinF32
// on that row: on the vector path (rows of whole vectors up to a sum
// block) as on the others, with NaNs, signed zeros and infinities about.
func TestRowFoldsMatchWholeFolds(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(4, 5))
		specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e30, -1e30}
		for _, cols := range []int{8, 13, 16, 128, 1000, 4096, 4104} {
			rows := 9
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				if rng.IntN(50) == 0 {
					x[i] = specials[rng.IntN(len(specials))]
				}
			}
			for j := range cols { // a row of negative zeros
				x[2*cols+j] = float32(math.Copysign(0, -1))
			}
			s, mx, mn := make([]float32, rows), make([]float32, rows), make([]float32, rows)
			SumRowsF32(s, x, rows, cols)
			MaxRowsF32(mx, x, rows, cols)
			MinRowsF32(mn, x, rows, cols)
			for i := range rows {
				row := x[i*cols : (i+1)*cols]
				for _, c := range []struct {
					name      string
					got, want float32
				}{{"sum", s[i], SumF32(row)}, {"max", mx[i], MaxF32(row)}, {"min", mn[i], MinF32(row)}} {
					if math.Float32bits(c.got) != math.Float32bits(c.want) && !(c.got != c.got && c.want != c.want) {
						t.Errorf("cols=%d row %d: %s of the rows %v, of the row alone %v", cols, i, c.name, c.got, c.want)
					}
				}
			}
		}
	})
}
