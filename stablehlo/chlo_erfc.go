package stablehlo

import "github.com/axle-ml/axle/hlo"

// erfc follows the legalization's Cephes-based approximations: 1 - erf(x)
// by a polynomial for |x| < 1, and exp(-x²) times rational functions of
// |x| (f64) or 1/x² (f32) beyond, so small results keep their relative
// precision.

var (
	erfcF32P = []float64{+2.326819970068386e-2, -1.387039388740657e-1, +3.687424674597105e-1,
		-5.824733027278666e-1, +6.210004621745983e-1, -4.944515323274145e-1, +3.404879937665872e-1,
		-2.741127028184656e-1, +5.638259427386472e-1}
	erfcF32R = []float64{-1.047766399936249e+1, +1.297719955372516e+1, -7.495518717768503e+0,
		+2.921019019210786e+0, -1.015265279202700e+0, +4.218463358204948e-1, -2.820767439740514e-1,
		+5.641895067754075e-1}
	erfF32T = []float64{+7.853861353153693e-5, -8.010193625184903e-4, +5.188327685732524e-3,
		-2.685381193529856e-2, +1.128358514861418e-1, -3.761262582423300e-1, +1.128379165726710e+0}
	erfcF64P = []float64{2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
		4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2, 9.34528527171957607540e2,
		1.02755188689515710272e3, 5.57535335369399327526e2}
	erfcF64Q = []float64{1.00000000000000000000e0, 1.32281951154744992508e1, 8.67072140885989742329e1,
		3.54937778887819891062e2, 9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
		1.65666309194161350182e3, 5.57535340817727675546e2}
	erfcF64R = []float64{5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
		6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0}
	erfcF64S = []float64{1.00000000000000000000e0, 2.26052863220117276590e0, 9.39603524938001434673e0,
		1.20489539808096656605e1, 1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0}
	erfF64T = []float64{9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
		7.00332514112805075473e3, 5.55923013010394962768e4}
	erfF64U = []float64{1.00000000000000000000e0, 3.35617141647503099647e1, 5.21357949780152679795e2,
		4.59432382970980127987e3, 2.26290000613890934246e4, 4.92673942608635921086e4}
)

// The f32 erf: a rational function of x², x clamped to [-4, 4] (where
// erf is ±1 in f32), the result clamped to [-1, 1].
var (
	erfF32Alpha = []float64{-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
		-5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02}
	erfF32Beta = []float64{-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
		-7.37332916720468e-03, -1.42647390514189e-02}
)

// erf is the legalization's f32 approximation (f16 and bf16 are computed
// in f32); f64 keeps HLO's erf, exact to an ulp.
func erf(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "erf"); err != nil {
		return nil, err
	}
	if x.Shape.DType == hlo.F64 {
		return b.un(hlo.OpErf, x), nil
	}
	xc := b.s.add(hlo.OpClamp, x.Shape, []*hlo.Instruction{b.c(-4), x, b.c(4)})
	xsq := b.mul(xc, xc)
	r := b.div(b.mul(xc, poly(b, xsq, erfF32Alpha)), poly(b, xsq, erfF32Beta))
	return b.s.add(hlo.OpClamp, x.Shape, []*hlo.Instruction{b.c(-1), r, b.c(1)}), nil
}

// poly evaluates coef[0]·x^(n-1) + ... + coef[n-1] by Horner's rule.
func poly(b eb, x *hlo.Instruction, coef []float64) *hlo.Instruction {
	p := b.c(coef[0])
	for _, c := range coef[1:] {
		p = b.add(b.mul(p, x), b.c(c))
	}
	return p
}

func erfc(b eb, x *hlo.Instruction) (*hlo.Instruction, error) {
	if err := requireFloat(x, "erfc"); err != nil {
		return nil, err
	}
	f64 := x.Shape.DType == hlo.F64
	xsq := b.mul(x, x)
	z := b.un(hlo.OpNegate, xsq)
	abs := b.un(hlo.OpAbs, x)
	one, two, zero := b.c(1), b.c(2), b.c(0)
	var large, small *hlo.Instruction
	maxLog := 88.72283905206835
	if f64 {
		maxLog = 7.09782712893383996843e2
		ez := b.un(hlo.OpExp, z)
		upTo8 := b.div(b.mul(ez, poly(b, abs, erfcF64P)), poly(b, abs, erfcF64Q))
		beyond := b.div(b.mul(ez, poly(b, abs, erfcF64R)), poly(b, abs, erfcF64S))
		large = b.sel(b.cmp("LT", abs, b.c(8)), upTo8, beyond)
		small = b.sub(one, b.div(b.mul(x, poly(b, xsq, erfF64T)), poly(b, xsq, erfF64U)))
	} else {
		r := b.div(one, xsq)
		scale := b.mul(b.un(hlo.OpExp, z), b.div(one, abs))
		p := b.sel(b.cmp("LT", abs, two), poly(b, r, erfcF32P), poly(b, r, erfcF32R))
		large = b.mul(scale, p)
		small = b.sub(one, b.mul(x, poly(b, xsq, erfF32T)))
	}
	large = b.sel(b.cmp("LT", z, b.c(-maxLog)), zero, large)
	large = b.sel(b.cmp("LT", x, zero), b.sub(two, large), large)
	return b.sel(b.cmp("LT", abs, one), small, large), nil
}
