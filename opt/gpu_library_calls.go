package opt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// GPULibraryCalls rewrites the custom calls a GPU compiler's passes leave in
// a module — cuBLAS GEMMs (`__cublas$gemm`, `__cublas$lt$matmul`,
// `__cublas$lt$matmul$f8`) and cuDNN convolutions (`__cudnn$convForward`,
// `__cudnn$convBackwardInput`, `__cudnn$convBackwardFilter`,
// `__cudnn$convBiasActivationForward`) — back into the dot or convolution
// they stand for, with the scaling and epilogue their backend_config asks
// for (XLA's xla/service/gpu/backend_configs.proto: GemmBackendConfig,
// CudnnConvBackendConfig), so that dumps taken after those passes run on
// any backend. A call whose result is a tuple gets the tuple back: the
// result, the auxiliary outputs the config names, and zeros for the
// scratch workspace the library used.
//
// Narrow floating-point calls compute in f32 and round once at the end, as
// the libraries accumulate in f32. A call the pass cannot read (a malformed
// config, an epilogue or a kind it does not know) is an error naming the
// instruction: leaving it would only fail later, at run time.
var GPULibraryCalls = pass.Func("gpu-library-calls", runGPULibraryCalls)

// gpuRewriters maps each custom_call_target to the rewrite building its
// replacement: the value of the call's first (or only) result element,
// followed by the values of the further tuple elements it computes.
var gpuRewriters = map[string]func(*gpuCall) ([]*hlo.Instruction, error){
	"__cublas$gemm":                     rewriteGemm,
	"__cublas$lt$matmul":                rewriteGemm,
	"__cublas$lt$matmul$f8":             rewriteGemm,
	"__cudnn$convForward":               rewriteConv,
	"__cudnn$convBackwardInput":         rewriteConv,
	"__cudnn$convBackwardFilter":        rewriteConv,
	"__cudnn$convBiasActivationForward": rewriteConv,
}

// IsGPULibraryCall reports whether in is a custom call GPULibraryCalls
// rewrites.
func IsGPULibraryCall(in *hlo.Instruction) bool {
	if in.Opcode != hlo.OpCustomCall {
		return false
	}
	t, _ := in.StringAttr("custom_call_target")
	_, ok := gpuRewriters[t]
	return ok
}

// gpuCall is one custom call being rewritten.
type gpuCall struct {
	*builder
	in     *hlo.Instruction
	target string
	out    hlo.Shape // the result array: the call's shape or its tuple element 0
}

func runGPULibraryCalls(m *hlo.Module) (bool, error) {
	names := hlo.NewNameSet(m)
	changed := false
	for _, c := range slices.Clone(m.Computations) {
		b := &builder{c: c, names: names}
		for _, in := range slices.Clone(c.Instructions) {
			if !IsGPULibraryCall(in) {
				continue
			}
			repl, err := rewriteGPUCall(b, in)
			if err != nil {
				return changed, fmt.Errorf("%s: %w", in.Name, err)
			}
			c.ReplaceAllUses(in, repl)
			if c.Root == in {
				c.Root = repl
			}
			c.RemoveInstructions(map[*hlo.Instruction]bool{in: true})
			changed = true
		}
		if b.added {
			if err := c.SortTopologically(); err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

// rewriteGPUCall builds in's replacement: the computed value, or a tuple
// of the computed values and zero workspaces when in returns a tuple.
func rewriteGPUCall(b *builder, in *hlo.Instruction) (*hlo.Instruction, error) {
	if len(in.ControlPredecessors) > 0 {
		return nil, fmt.Errorf("a GPU library call with control predecessors is not supported")
	}
	target, _ := in.StringAttr("custom_call_target")
	call := &gpuCall{builder: b, in: in, target: target, out: in.Shape}
	if in.Shape.IsTuple() {
		if len(in.Shape.Tuple) == 0 || !in.Shape.Tuple[0].IsArray() {
			return nil, fmt.Errorf("%s returns %s; want an array or a tuple starting with one", target, in.Shape.HumanString())
		}
		call.out = in.Shape.Tuple[0]
	} else if !in.Shape.IsArray() {
		return nil, fmt.Errorf("%s returns %s; want an array or a tuple", target, in.Shape.HumanString())
	}
	vals, err := gpuRewriters[target](call)
	if err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	if !in.Shape.IsTuple() {
		return vals[0], nil
	}
	elems := make([]*hlo.Instruction, len(in.Shape.Tuple))
	for i, s := range in.Shape.Tuple {
		switch {
		case i < len(vals):
			elems[i] = vals[i]
		case s.IsArray() && (s.DType == hlo.S8 || s.DType == hlo.U8):
			// The library's scratch buffer: nothing reads it.
			elems[i] = b.withShape(hlo.OpBroadcast, hlo.ArrayShape(s.DType, s.Dims...), []*hlo.Instruction{b.scalar(s.DType, 0)},
				hlo.Attr{Name: "dimensions", Value: []int64{}})
		default:
			return nil, fmt.Errorf("%s: tuple element %d (%s) is neither a result the backend_config names nor an s8/u8 workspace", target, i, s.HumanString())
		}
	}
	t := b.add(hlo.OpTuple, elems)
	if b.err != nil {
		return nil, b.err
	}
	return t, nil
}

// computeType is the type a call computes in: f64 for f64 results, f32
// otherwise (the libraries accumulate narrow floats and integers in f32;
// s32 results of s8 GEMMs stay integer).
func computeType(out hlo.DType) hlo.DType {
	switch {
	case out == hlo.F64:
		return hlo.F64
	case out.IsInteger():
		return out
	}
	return hlo.F32
}

// to converts x to type t (x itself if it already has it).
func (c *gpuCall) to(x *hlo.Instruction, t hlo.DType) *hlo.Instruction {
	if x == nil || x.Shape.DType == t {
		return x
	}
	return c.withShape(hlo.OpConvert, hlo.ArrayShape(t, x.Shape.Dims...), []*hlo.Instruction{x})
}

// scale multiplies x by the constant v unless v is 1.
func (c *gpuCall) scale(x *hlo.Instruction, v float64) *hlo.Instruction {
	if v == 1 {
		return x
	}
	return c.add(hlo.OpMultiply, []*hlo.Instruction{x, c.splat(x, v)})
}

// binary applies op to x and y, which have the same shape.
func (c *gpuCall) binary(op hlo.Opcode, x, y *hlo.Instruction) *hlo.Instruction {
	return c.add(op, []*hlo.Instruction{x, y})
}

// unary applies op to x.
func (c *gpuCall) unary(op hlo.Opcode, x *hlo.Instruction) *hlo.Instruction {
	return c.add(op, []*hlo.Instruction{x})
}

// backendConfig decodes the call's backend_config JSON into v: either the
// bare config or the GpuBackendConfig wrapping it under key (newer XLA
// prints the wrapper, older the bare message; the text may be a quoted
// string or the JSON itself).
func (c *gpuCall) backendConfig(key string, v any) error {
	raw, ok := c.in.Attr("backend_config")
	if !ok {
		return fmt.Errorf("%s has no backend_config", c.target)
	}
	text := strings.TrimSpace(fmt.Sprint(raw))
	if strings.HasPrefix(text, `"`) {
		s, err := strconv.Unquote(text)
		if err != nil {
			return fmt.Errorf("%s: backend_config is not a valid string: %v", c.target, err)
		}
		text = s
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		return fmt.Errorf("%s: backend_config is not JSON: %v", c.target, err)
	}
	body := []byte(text)
	if inner, ok := top[key]; ok {
		body = inner
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: backend_config: %v", c.target, err)
	}
	return nil
}

// pbInt is a protobuf JSON int64: a string ("1") or a number.
type pbInt int64

func (n *pbInt) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*n = pbInt(v)
	return err
}

// pbFloat is a protobuf JSON double: a number or a string ("1.5", "NaN",
// "Infinity").
type pbFloat float64

func (f *pbFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	switch s {
	case "Infinity":
		s = "+Inf"
	case "-Infinity":
		s = "-Inf"
	}
	v, err := strconv.ParseFloat(s, 64)
	*f = pbFloat(v)
	return err
}

func int64s(v []pbInt) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// valueOr reads an optional scale: absent means def. The proto3 default
// is 0, but XLA's rewriters always write the scales, and a dump without
// one (older or hand-written) means the identity.
func valueOr(p *pbFloat, def float64) float64 {
	if p == nil {
		return def
	}
	return float64(*p)
}
