package cpu

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

func TestConvGenericConformance(t *testing.T) {
	conformanceOps(t, hlo.OpConvolution, intoWhole(lowerConvGeneric))
}

// convGenericCase is a random convolution: 1 or 2 spatial dimensions,
// shuffled dimension labels, strides, padding (negative too), dilations,
// reversal, feature or batch groups.
func convGenericCase(rng *rand.Rand, lt, rt, ot hlo.DType) (params []string, root string) {
	ns := 1 + rng.IntN(2)
	fg, bg := 1, 1
	switch rng.IntN(3) {
	case 1:
		fg = 1 + rng.IntN(3)
	case 2:
		bg = 1 + rng.IntN(3)
	}
	batch := bg * (1 + rng.IntN(2))
	inF := fg * (1 + rng.IntN(3))
	outF := fg * bg * (1 + rng.IntN(2))
	spatial := make([]int64, ns)
	kern := make([]int64, ns)
	outS := make([]int64, ns)
	var win []string
	for i := range ns {
		spatial[i] = int64(1 + rng.IntN(6))
		kern[i] = int64(1 + rng.IntN(3))
		st, ld, rd := int64(1+rng.IntN(2)), int64(1+rng.IntN(2)), int64(1+rng.IntN(2))
		lo, hi := int64(rng.IntN(3)-1), int64(rng.IntN(3)-1)
		in := (spatial[i]-1)*ld + 1 + lo + hi
		k := (kern[i]-1)*rd + 1
		if in < k {
			lo, hi = k, k
			in = (spatial[i]-1)*ld + 1 + lo + hi
		}
		outS[i] = (in-k)/st + 1
		win = append(win, fmt.Sprintf("%d|%d|%d_%d|%d|%d|%d", kern[i], st, lo, hi, ld, rd, rng.IntN(2)))
	}
	// Dimension orders: a random permutation of (b, f, spatial...).
	perm := func(n int) []int { return rng.Perm(n) }
	labels := func(first, second byte, p []int) string {
		s := make([]byte, ns+2)
		for pos, role := range p {
			switch role {
			case 0:
				s[pos] = first
			case 1:
				s[pos] = second
			default:
				s[pos] = byte('0' + role - 2)
			}
		}
		return string(s)
	}
	dimsOf := func(a, b int64, sp []int64, p []int) []int64 {
		d := make([]int64, ns+2)
		for pos, role := range p {
			switch role {
			case 0:
				d[pos] = a
			case 1:
				d[pos] = b
			default:
				d[pos] = sp[role-2]
			}
		}
		return d
	}
	lp, rp, op := perm(ns+2), perm(ns+2), perm(ns+2)
	ldims := dimsOf(int64(batch), int64(inF), spatial, lp)
	rdims := dimsOf(int64(inF/fg), int64(outF), kern, rp)
	odims := dimsOf(int64(batch/bg), int64(outF), outS, op)
	var size, stride, pad, lhsd, rhsd, rev []string
	for _, w := range win {
		var k, st, ld, rd int64
		var p string
		parts := strings.Split(w, "|")
		fmt.Sscan(parts[0], &k)
		fmt.Sscan(parts[1], &st)
		p = parts[2]
		fmt.Sscan(parts[3], &ld)
		fmt.Sscan(parts[4], &rd)
		size = append(size, fmt.Sprint(k))
		stride = append(stride, fmt.Sprint(st))
		pad = append(pad, p)
		lhsd = append(lhsd, fmt.Sprint(ld))
		rhsd = append(rhsd, fmt.Sprint(rd))
		rev = append(rev, parts[5])
	}
	window := fmt.Sprintf("size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s rhs_reversal=%s",
		strings.Join(size, "x"), strings.Join(stride, "x"), strings.Join(pad, "x"), strings.Join(lhsd, "x"),
		strings.Join(rhsd, "x"), strings.Join(rev, "x"))
	params = []string{shapeText(lt, ldims), shapeText(rt, rdims)}
	root = fmt.Sprintf("%s convolution(p0, p1), window={%s}, dim_labels=%s_%s->%s, feature_group_count=%d, batch_group_count=%d",
		shapeText(ot, odims), window, labels('b', 'f', lp), labels('i', 'o', rp), labels('b', 'f', op), fg, bg)
	return params, root
}

func TestConvGenericRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	types := [][3]hlo.DType{
		{hlo.F64, hlo.F64, hlo.F64}, {hlo.S32, hlo.S32, hlo.S32}, {hlo.S8, hlo.S8, hlo.S32},
		{hlo.BF16, hlo.BF16, hlo.BF16}, {hlo.F16, hlo.F16, hlo.F16}, {hlo.F32, hlo.F32, hlo.F32},
		{hlo.U8, hlo.U8, hlo.U8}, {hlo.S64, hlo.S64, hlo.S64}, {hlo.C128, hlo.C128, hlo.C128},
		{hlo.BF16, hlo.BF16, hlo.F32}, {hlo.S16, hlo.S16, hlo.S16}, {hlo.Pred, hlo.Pred, hlo.Pred},
	}
	ran := 0
	for i := range 600 {
		ty := types[i%len(types)]
		params, root := convGenericCase(rng, ty[0], ty[1], ty[2])
		text := module(params, root)
		in := parseRootOrNil(text)
		if in == nil || hlo.Verify(in.Parent.Parent) != nil {
			continue
		}
		runWhole(t, intoWhole(lowerConvGeneric), in, randomOperands(in, rng), 1+rng.IntN(3))
		ran++
	}
	if ran < 280 {
		t.Fatalf("only %d of 600 random convolutions verified", ran)
	}
	t.Logf("%d random convolutions", ran)
}

func TestConvGenericBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	in := parseRoot(t, module([]string{"f64[2,16,16,8]", "f64[3,3,8,16]"},
		"f64[2,16,16,16] convolution(p0, p1), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f"))
	if !in.Window().Dims[0].Reversal {
		t.Fatal("reversal not parsed")
	}
	for threads := 1; threads <= 3; threads++ {
		runWhole(t, intoWhole(lowerConvGeneric), in, randomOperands(in, rng), threads)
	}
}
