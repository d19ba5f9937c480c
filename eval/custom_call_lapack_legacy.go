package eval

import (
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// The custom calls JAX emitted before its LAPACK kernels moved to the
// typed FFI (jaxlib ≤ 0.4.31, still in exported models): the flags and
// sizes come first as scalar operands, and the results carry LAPACK's
// workspace arrays as well. Operand order and results follow that
// jaxlib's cpu/lapack_kernels.cc. The sizes are taken from the matrices'
// shapes (JAX's lowering passes the same numbers); the flags become the
// FFI kernels' attributes, and the workspace results come back as zeros.

// legacyForm describes one old target: how many scalar operands lead,
// how they map to attributes, and which results the FFI kernel computes.
type legacyForm struct {
	scalars int
	// attrs turns the scalar operands into FFI attributes.
	attrs func(s []*hlo.Literal) map[string]int64
	// produced lists, in the kernel's result order, the legacy result
	// index of each; the other legacy results are workspace (or an info
	// the FFI kernel lacks) and are zero.
	produced []int
	kernel   lapackKernel
}

func init() {
	flag := func(s *hlo.Literal, yes, no byte) int64 {
		if s.GetInt64(0) != 0 {
			return int64(yes)
		}
		return int64(no)
	}
	lowerAttr := func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"uplo": flag(s[0], 'L', 'U')}
	}
	none := func([]*hlo.Literal) map[string]int64 { return map[string]int64{} }
	registerLegacy("lapack_?potrf", "sdcz", legacyForm{3, lowerAttr, []int{0, 1}, kPotrf})
	registerLegacy("lapack_?getrf", "sdcz", legacyForm{3, none, []int{0, 1, 2}, kGetrf})
	registerLegacy("lapack_?geqrf", "sdcz", legacyForm{4, none, []int{0, 1}, kGeqrf})
	registerLegacy("lapack_?orgqr", "sd", legacyForm{5, none, []int{0}, kOrgqr})
	registerLegacy("lapack_?ungqr", "cz", legacyForm{5, none, []int{0}, kOrgqr})
	registerLegacy("lapack_?syevd", "sd", legacyForm{3, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"uplo": flag(s[0], 'L', 'U'), "mode": 'V'}
	}, []int{0, 1, 2}, kSyevd})
	registerLegacy("lapack_?gesdd", "sd", legacyForm{6, func(s []*hlo.Literal) map[string]int64 {
		mode := flag(s[0], 'A', 'S')
		if s[1].GetInt64(0) == 0 {
			mode = 'N'
		}
		return map[string]int64{"mode": mode}
	}, []int{0, 1, 2, 3, 4}, kGesdd})
	// geev(b, n, jobvl, jobvr, a) → (a, vl, vr work, wr, wi, vl, vr, info);
	// the job flags are the characters 'N' / 'V' as u8 scalars.
	registerLegacy("lapack_?geev", "sd", legacyForm{4, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"compute_left": s[2].GetInt64(0), "compute_right": s[3].GetInt64(0)}
	}, []int{3, 4, 5, 6, 7}, kGeev})
	// gees(b, n, jobvs, sort, a) → (t, wr, wi, vs, sdim, info).
	registerLegacy("lapack_?gees", "sd", legacyForm{4, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"mode": s[2].GetInt64(0), "sort": s[3].GetInt64(0)}
	}, []int{0, 3, 1, 2, 4, 5}, kGees})
	// gehrd(n, ilo, ihi, lda, batch, lwork, a) → (a, tau, info, work).
	registerLegacy("lapack_?gehrd", "sd", legacyForm{6, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"low": s[1].GetInt64(0), "high": s[2].GetInt64(0)}
	}, []int{0, 1, 2}, kGehrd})
	// sytrd(n, lower, lda, batch, lwork, a) → (a, d, e, tau, info, work).
	registerLegacy("lapack_?sytrd", "sd", legacyForm{5, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"uplo": flag(s[1], 'L', 'U')}
	}, []int{0, 1, 2, 3, 4}, kSytrd})
	// The complex forms of the above: heevd also returns rwork, gesdd
	// rwork (after iwork), before the workspace.
	registerLegacy("lapack_?heevd", "cz", legacyForm{3, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"uplo": flag(s[0], 'L', 'U'), "mode": 'V'}
	}, []int{0, 1, 2}, kHeevd})
	registerLegacy("lapack_?gesdd", "cz", legacyForm{6, func(s []*hlo.Literal) map[string]int64 {
		mode := flag(s[0], 'A', 'S')
		if s[1].GetInt64(0) == 0 {
			mode = 'N'
		}
		return map[string]int64{"mode": mode}
	}, []int{0, 1, 2, 3, 4}, kGesddComplex})
	registerLegacy("lapack_?gehrd", "cz", legacyForm{6, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"low": s[1].GetInt64(0), "high": s[2].GetInt64(0)}
	}, []int{0, 1, 2}, kGehrdComplex})
	registerLegacy("lapack_?hetrd", "cz", legacyForm{5, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"uplo": flag(s[1], 'L', 'U')}
	}, []int{0, 1, 2, 3, 4}, kHetrd})
	// Complex geev(b, n, jobvl, jobvr, a) → (a, rwork, w, vl, vr, info) and
	// gees(b, n, jobvs, sort, a) → (t, rwork, w, vs, sdim, info).
	registerLegacy("lapack_?geev", "cz", legacyForm{4, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"compute_left": s[2].GetInt64(0), "compute_right": s[3].GetInt64(0)}
	}, []int{2, 3, 4, 5}, kGeevComplex})
	registerLegacy("lapack_?gees", "cz", legacyForm{4, func(s []*hlo.Literal) map[string]int64 {
		return map[string]int64{"mode": s[2].GetInt64(0), "sort": s[3].GetInt64(0)}
	}, []int{0, 3, 2, 4, 5}, kGeesComplex})
	// blas_?trsm(left_side, lower, trans_a (0 N, 1 T, 2 C), unit_diagonal,
	// m, n, batch, alpha, a, b) → x with op(a)·x = alpha·b or x·op(a) = alpha·b.
	registerLegacy("blas_?trsm", "sdcz", legacyForm{8, nil, []int{0}, nil})
}

func registerLegacy(name, letters string, f legacyForm) {
	registerLapack(name, letters, func(c *lapackCall) ([]*hlo.Literal, error) {
		return runLegacy(c, f)
	})
}

func runLegacy(c *lapackCall, f legacyForm) ([]*hlo.Literal, error) {
	if len(c.ops) < f.scalars {
		return nil, fmt.Errorf("takes %d leading scalar operands and the matrices, got %d operands", f.scalars, len(c.ops))
	}
	scalars := c.ops[:f.scalars]
	for i, s := range scalars {
		if !s.Shape().IsArray() || s.Shape().Rank() != 0 {
			return nil, fmt.Errorf("operand %d is %s, want a scalar", i, s.Shape().HumanString())
		}
	}
	all := c.results
	sub := *c
	sub.ops, sub.opBase = c.ops[f.scalars:], f.scalars
	if f.kernel == nil { // blas_?trsm
		return legacyTrsm(&sub, scalars)
	}
	sub.attrs = f.attrs(scalars)
	sub.results = nil
	for _, k := range f.produced {
		if k >= len(all) {
			return nil, fmt.Errorf("returns at least %d results, the instruction's shape %s has %d", k+1, c.in.Shape.HumanString(), len(all))
		}
		sub.results = append(sub.results, all[k])
	}
	outs, err := f.kernel(&sub)
	if err != nil {
		return nil, err
	}
	res := make([]*hlo.Literal, len(all))
	for i, k := range f.produced {
		res[k] = outs[i]
	}
	for k, r := range res {
		if r == nil {
			if !all[k].IsArray() {
				return nil, fmt.Errorf("result %d is %s, want an array", k, all[k].HumanString())
			}
			res[k] = hlo.NewLiteral(all[k])
		}
	}
	return res, nil
}

func legacyTrsm(c *lapackCall, s []*hlo.Literal) ([]*hlo.Literal, error) {
	f := trsmFlags{side: 'R', uplo: 'U', trans: 'N', diag: 'N', alpha: s[7].GetComplex128(0)}
	if s[0].GetInt64(0) != 0 {
		f.side = 'L'
	}
	if s[1].GetInt64(0) != 0 {
		f.uplo = 'L'
	}
	switch s[2].GetInt64(0) {
	case 1:
		f.trans = 'T'
	case 2:
		f.trans = 'C'
	}
	if s[3].GetInt64(0) != 0 {
		f.diag = 'U'
	}
	return trsm(c, f)
}
