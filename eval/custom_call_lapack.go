package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// JAX lowers jnp.linalg on the CPU to custom calls into LAPACK and BLAS
// (jaxlib/cpu/lapack_kernels.cc). This file holds what every such target
// shares: the target table, the typed-FFI attributes, and the layouts.
//
// A LAPACK kernel reads its buffers as they lie in memory: each trailing
// rows×cols matrix column-major (leading dimension rows), one after another
// over the leading (batch) dimensions. JAX asks for exactly that with the
// layouts {0,1}, {1,2,0}, ... in operand_layout_constraints and the result
// shape, so the logical array is the matrix LAPACK sees. The evaluator keeps
// literals in logical order, so it maps them through the layouts the call
// states: a call with row-major layouts would hand LAPACK the transposes,
// as XLA would.

// lapackKernel computes one target's results (in tuple order) from a
// decoded call.
type lapackKernel func(c *lapackCall) ([]*hlo.Literal, error)

// lapackTarget is one registered target: its kernel and element type.
type lapackTarget struct {
	kernel lapackKernel
	dtype  hlo.DType
}

var lapackTargets = map[string]lapackTarget{}

// lapackTypes maps LAPACK's type letter to the element type.
var lapackTypes = []struct {
	letter byte
	dtype  hlo.DType
}{{'s', hlo.F32}, {'d', hlo.F64}, {'c', hlo.C64}, {'z', hlo.C128}}

// lapackKernels is every FFI target of JAX's CPU lowering that the
// evaluator runs: the name with ? for the type letter, the letters it
// takes, its kernel.
var lapackKernels = []struct {
	name, letters string
	kernel        lapackKernel
}{
	// Factorizations and solvers (custom_call_lapack_factor.go, _qr.go).
	{"lapack_?potrf_ffi", "sdcz", kPotrf},
	{"lapack_?getrf_ffi", "sdcz", kGetrf},
	{"lapack_?geqrf_ffi", "sdcz", kGeqrf},
	{"lapack_?orgqr_ffi", "sd", kOrgqr},
	{"lapack_?ungqr_ffi", "cz", kOrgqr},
	{"lapack_?trsm_ffi", "sdcz", kTrsm},
	{"lapack_?gtsv_ffi", "sd", kGtsv},
	{"lapack_?gtsv_ffi", "cz", kGtsvComplex},
	{"lapack_?geqp3_ffi", "sd", kGeqp3},
	{"lapack_?geqp3_ffi", "cz", kGeqp3Complex},
	{"lapack_?ormqr_ffi", "sd", kOrmqr},
	{"lapack_?unmqr_ffi", "cz", kUnmqr},
	// Eigenvalues, singular values, reductions (_eig.go, _zeig.go,
	// _jacobi.go, _complex2.go).
	{"lapack_?syevd_ffi", "sd", kSyevd},
	{"lapack_?heevd_ffi", "cz", kHeevd},
	{"lapack_?gesdd_ffi", "sd", kGesdd},
	{"lapack_?gesdd_ffi", "cz", kGesddComplex},
	{"lapack_?gesvd_ffi", "sd", kGesdd}, // same operands, results and modes
	{"lapack_?gesvd_ffi", "cz", kGesddComplex},
	{"lapack_?geev_ffi", "sd", kGeev},
	{"lapack_?geev_ffi", "cz", kGeevComplex},
	{"lapack_?gees_ffi", "sd", kGees},
	{"lapack_?gees_ffi", "cz", kGeesComplex},
	{"lapack_?gehrd_ffi", "sd", kGehrd},
	{"lapack_?gehrd_ffi", "cz", kGehrdComplex},
	{"lapack_?sytrd_ffi", "sd", kSytrd},
	{"lapack_?hetrd_ffi", "cz", kHetrd},
}

func init() {
	for _, r := range lapackKernels {
		registerLapack(r.name, r.letters, r.kernel)
	}
}

// registerLapack adds target for each type letter in letters; name is a
// pattern whose '?' is replaced by the letter ("lapack_?potrf_ffi").
func registerLapack(name, letters string, k lapackKernel) {
	for _, t := range lapackTypes {
		if !strings.ContainsRune(letters, rune(t.letter)) {
			continue
		}
		target := strings.Replace(name, "?", string(t.letter), 1)
		lapackTargets[target] = lapackTarget{k, t.dtype}
		customCallTargets[target] = evalLapack
	}
}

func evalLapack(_ *Evaluator, in *hlo.Instruction, ops []*hlo.Literal) (out *hlo.Literal, err error) {
	target, _ := in.StringAttr("custom_call_target")
	// gonum panics on arguments it rejects; the checks here should leave
	// none, and a miss must still be an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("custom-call %q: internal error: %v", target, r)
		}
	}()
	t := lapackTargets[target]
	c, err := newLapackCall(in, target, t.dtype, ops)
	if err != nil {
		return nil, err
	}
	outs, err := t.kernel(c)
	if err != nil {
		return nil, fmt.Errorf("custom-call %q: %w", target, err)
	}
	if !in.Shape.IsTuple() {
		return outs[0], nil
	}
	return hlo.MakeTupleLiteral(outs...), nil
}

// lapackCall is one custom call being evaluated.
type lapackCall struct {
	in     *hlo.Instruction
	target string
	dtype  hlo.DType
	ops    []*hlo.Literal
	attrs  map[string]int64 // typed-FFI attributes from backend_config
	// opBase is the instruction operand ops[0] is (legacy calls lead with
	// scalar flags the kernels do not see).
	opBase int
	// results are the result shapes, one per tuple element.
	results []hlo.Shape
}

func newLapackCall(in *hlo.Instruction, target string, dt hlo.DType, ops []*hlo.Literal) (*lapackCall, error) {
	c := &lapackCall{in: in, target: target, dtype: dt, ops: ops}
	var err error
	if c.attrs, err = parseFFIAttrs(in); err != nil {
		return nil, fmt.Errorf("custom-call %q: %w", target, err)
	}
	c.results = []hlo.Shape{in.Shape}
	if in.Shape.IsTuple() {
		c.results = in.Shape.Tuple
	}
	return c, nil
}

// parseFFIAttrs reads the attribute dictionary a typed-FFI call carries in
// backend_config, as XLA prints it: `{mode = 86 : ui8, uplo = 76 : ui8}`
// (MLIR attribute syntax; characters are their ASCII codes, booleans
// true/false). The legacy API passes flags as operands and has none.
func parseFFIAttrs(in *hlo.Instruction) (map[string]int64, error) {
	out := map[string]int64{}
	v, ok := in.Attr("backend_config")
	if !ok {
		return out, nil
	}
	text := strings.TrimSpace(fmt.Sprint(v))
	if uq, err := strconv.Unquote(text); err == nil {
		text = strings.TrimSpace(uq)
	}
	if text == "" {
		return out, nil
	}
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return nil, fmt.Errorf("backend_config %s is not an attribute dictionary", text)
	}
	body := strings.TrimSpace(text[1 : len(text)-1])
	if body == "" {
		return out, nil
	}
	for _, item := range strings.Split(body, ",") {
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("backend_config entry %q has no value", strings.TrimSpace(item))
		}
		name = strings.Trim(strings.TrimSpace(name), `"`)
		val, _, _ = strings.Cut(val, ":") // drop the type (": ui8")
		val = strings.TrimSpace(val)
		switch val {
		case "true":
			out[name] = 1
		case "false":
			out[name] = 0
		default:
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("backend_config attribute %s = %s is not an integer", name, val)
			}
			out[name] = n
		}
	}
	return out, nil
}

// char returns a character attribute (uplo, mode, ...), def when absent,
// and an error when it is not one of allowed.
func (c *lapackCall) char(name string, def byte, allowed string) (byte, error) {
	v, ok := c.attrs[name]
	if !ok {
		return def, nil
	}
	if v < 0 || v > 127 || !strings.ContainsRune(allowed, rune(v)) {
		return 0, fmt.Errorf("attribute %s = %d is not one of %q", name, v, allowed)
	}
	return byte(v), nil
}

// charAttr is a character attribute a kernel takes: its name, its value
// when absent, and the values allowed.
type charAttr struct {
	name    string
	def     byte
	allowed string
}

// The character attributes several kernels share.
var (
	uploAttr   = charAttr{"uplo", 'L', "LU"}
	vectorAttr = charAttr{"mode", 'V', "NV"} // eigen- or Schur vectors wanted
	leftAttr   = charAttr{"compute_left", 'V', "NV"}
	rightAttr  = charAttr{"compute_right", 'V', "NV"}
)

// chars reads the attributes attrs, in order, stopping at the first
// invalid one.
func (c *lapackCall) chars(attrs ...charAttr) ([]byte, error) {
	out := make([]byte, len(attrs))
	for i, a := range attrs {
		v, err := c.char(a.name, a.def, a.allowed)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// checkOperands checks the operand count and that operand i has the call's
// element type and rank ≥ minRank[i].
func (c *lapackCall) checkOperands(minRank ...int) error {
	if len(c.ops) != len(minRank) {
		return fmt.Errorf("takes %d operands, got %d", len(minRank), len(c.ops))
	}
	for i, r := range minRank {
		s := c.ops[i].Shape()
		if !s.IsArray() || s.DType != c.dtype {
			return fmt.Errorf("operand %d is %s, want %s", i, s.HumanString(), c.dtype)
		}
		if s.Rank() < r {
			return fmt.Errorf("operand %d is %s, want rank ≥ %d", i, s.HumanString(), r)
		}
	}
	return nil
}

// checkResults checks the result count, element types and dimensions.
func (c *lapackCall) checkResults(want ...hlo.Shape) error {
	if len(c.results) != len(want) {
		return fmt.Errorf("returns %d results, the instruction's shape %s has %d", len(want), c.in.Shape.HumanString(), len(c.results))
	}
	for i, w := range want {
		g := c.results[i]
		if !g.IsArray() || g.DType != w.DType || !g.SameDims(w) {
			return fmt.Errorf("result %d is %s, want %s", i, g.HumanString(), w.HumanString())
		}
	}
	return nil
}

// batchDims returns operand i's leading dimensions (all but the last n).
func (c *lapackCall) batchDims(i, n int) []int64 {
	d := c.ops[i].Shape().Dims
	return append([]int64(nil), d[:len(d)-n]...)
}

// matrixBatch is an operand read as nb m×n matrices over the leading
// dimensions batch; k = min(m, n).
type matrixBatch struct {
	shape       hlo.Shape
	batch       []int64
	nb, m, n, k int
}

// matrices returns operand i's matrices; the operand has rank ≥ 2.
func (c *lapackCall) matrices(i int) matrixBatch {
	s := c.ops[i].Shape()
	m, n := int(s.Dims[s.Rank()-2]), int(s.Dims[s.Rank()-1])
	batch := c.batchDims(i, 2)
	return matrixBatch{s, batch, numBatch(batch), m, n, min(m, n)}
}

func dimsOf(batch []int64, more ...int64) []int64 {
	return append(append([]int64(nil), batch...), more...)
}

func shapeOf(dt hlo.DType, batch []int64, more ...int64) hlo.Shape {
	return hlo.ArrayShape(dt, dimsOf(batch, more...)...)
}

// operandLayout returns the minor-to-major order operand i is read in:
// operand_layout_constraints when the call has them, else the operand's
// own layout, else the row-major default.
func (c *lapackCall) operandLayout(i int) []int64 {
	i += c.opBase
	if v, ok := c.in.Attr("operand_layout_constraints"); ok {
		if ls, ok := v.([]hlo.Shape); ok && i < len(ls) && ls[i].Layout != nil && ls[i].Rank() == c.ops[i-c.opBase].Shape().Rank() {
			return ls[i].Layout.MinorToMajor
		}
	}
	rank := c.ops[i-c.opBase].Shape().Rank()
	if i < len(c.in.Operands) {
		if l := c.in.Operands[i].Shape.Layout; l != nil && len(l.MinorToMajor) == rank {
			return l.MinorToMajor
		}
	}
	return hlo.DefaultLayout(rank).MinorToMajor
}

func (c *lapackCall) resultLayout(k int) []int64 {
	s := c.results[k]
	if s.Layout != nil && len(s.Layout.MinorToMajor) == s.Rank() {
		return s.Layout.MinorToMajor
	}
	return hlo.DefaultLayout(s.Rank()).MinorToMajor
}

// physOffsets returns, for each element in logical (row-major) order, its
// offset in a buffer laid out minor-to-major as m2m.
func physOffsets(dims, m2m []int64) []int {
	stride := make([]int, len(dims))
	s := 1
	for _, d := range m2m {
		stride[d] = s
		s *= int(dims[d])
	}
	out := make([]int, s)
	idx := make([]int64, len(dims))
	for l := range out {
		off := 0
		for d := range dims {
			off += int(idx[d]) * stride[d]
		}
		out[l] = off
		for d := len(dims) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < dims[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

func toPhys[T any](logical []T, dims, m2m []int64) []T {
	out := make([]T, len(logical))
	for l, p := range physOffsets(dims, m2m) {
		out[p] = logical[l]
	}
	return out
}

func fromPhys[T any](phys []T, dims, m2m []int64) []T {
	out := make([]T, len(phys))
	for l, p := range physOffsets(dims, m2m) {
		out[l] = phys[p]
	}
	return out
}

// transposeBatch turns a batch of r×c matrices stored column-major into
// the same matrices row-major (swap r and c for the reverse direction).
func transposeBatch[T any](v []T, r, c int) []T {
	out := make([]T, len(v))
	if r*c == 0 {
		return out
	}
	for b := 0; b+r*c <= len(v); b += r * c {
		for i := range r {
			for j := range c {
				out[b+i*c+j] = v[b+j*r+i]
			}
		}
	}
	return out
}

// realMats reads operand i, rank ≥ 2, as the batch of matrices LAPACK
// sees, each rows×cols and stored row-major (gonum's convention).
func (c *lapackCall) realMats(i int) (rows, cols int, v []float64) {
	s := c.ops[i].Shape()
	rows, cols = int(s.Dims[s.Rank()-2]), int(s.Dims[s.Rank()-1])
	phys := toPhys(loadFloat64(c.ops[i]), s.Dims, c.operandLayout(i))
	return rows, cols, transposeBatch(phys, rows, cols)
}

func (c *lapackCall) cplxMats(i int) (rows, cols int, v []complex128) {
	s := c.ops[i].Shape()
	rows, cols = int(s.Dims[s.Rank()-2]), int(s.Dims[s.Rank()-1])
	phys := toPhys(loadComplex128(c.ops[i]), s.Dims, c.operandLayout(i))
	return rows, cols, transposeBatch(phys, rows, cols)
}

// realVec and cplxVec read operand i in its memory order (vectors such as
// tau, or a batch of them).
func (c *lapackCall) realVec(i int) []float64 {
	return toPhys(loadFloat64(c.ops[i]), c.ops[i].Shape().Dims, c.operandLayout(i))
}

func (c *lapackCall) cplxVec(i int) []complex128 {
	return toPhys(loadComplex128(c.ops[i]), c.ops[i].Shape().Dims, c.operandLayout(i))
}

// realMatsOut stores row-major matrices as result k; cplxMatsOut likewise.
func (c *lapackCall) realMatsOut(k int, v []float64) *hlo.Literal {
	s := c.results[k]
	r, cl := int(s.Dims[s.Rank()-2]), int(s.Dims[s.Rank()-1])
	return c.realVecOut(k, transposeBatch(v, cl, r))
}

func (c *lapackCall) cplxMatsOut(k int, v []complex128) *hlo.Literal {
	s := c.results[k]
	r, cl := int(s.Dims[s.Rank()-2]), int(s.Dims[s.Rank()-1])
	return c.cplxVecOut(k, transposeBatch(v, cl, r))
}

// realVecOut, cplxVecOut and intOut store result k from its memory order.
func (c *lapackCall) realVecOut(k int, phys []float64) *hlo.Literal {
	s := c.results[k]
	return storeFloat64(s, fromPhys(phys, s.Dims, c.resultLayout(k)))
}

func (c *lapackCall) cplxVecOut(k int, phys []complex128) *hlo.Literal {
	s := c.results[k]
	return storeComplex128(s, fromPhys(phys, s.Dims, c.resultLayout(k)))
}

func (c *lapackCall) intOut(k int, phys []int64) *hlo.Literal {
	s := c.results[k]
	return storeInt64(s, fromPhys(phys, s.Dims, c.resultLayout(k)))
}

// numBatch is the number of matrices over batch dimensions dims.
func numBatch(dims []int64) int {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	return n
}
