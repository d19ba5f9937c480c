package stablehlo

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// What a custom_call's implementation needs beyond its target and
// operands, carried into HLO as XLA's MLIR translation does:
// operand_layouts become operand_layout_constraints, result_layouts the
// result shapes' layouts (JAX's LAPACK calls ask for column-major
// matrices this way), and a typed-FFI call's attribute dictionary
// (mhlo.backend_config) becomes backend_config={name = value : type, ...}
// with api_version=API_VERSION_TYPED_FFI.

// apiVersions names the custom_call api_version values.
var apiVersions = map[int64]string{
	1: "API_VERSION_ORIGINAL",
	2: "API_VERSION_STATUS_RETURNING",
	3: "API_VERSION_STATUS_RETURNING_UNIFIED",
	4: "API_VERSION_TYPED_FFI",
}

// customCallExtras returns the attributes for op's layouts, API version
// and FFI attributes, and sets the result layouts in shapes.
func customCallExtras(op *mlir.Op, ins []*hlo.Instruction, shapes []hlo.Shape) ([]hlo.Attr, error) {
	var attrs []hlo.Attr
	if a := op.Attr("operand_layouts"); a != nil {
		ls, err := layoutList(a, len(ins))
		if err != nil {
			return nil, fmt.Errorf("operand_layouts: %w", err)
		}
		cons := make([]hlo.Shape, len(ins))
		for i, in := range ins {
			cons[i] = in.Shape.Clone()
			if err := setLayout(&cons[i], ls[i]); err != nil {
				return nil, fmt.Errorf("operand_layouts[%d]: %w", i, err)
			}
		}
		attrs = append(attrs, hlo.Attr{Name: "operand_layout_constraints", Value: cons})
	}
	if a := op.Attr("result_layouts"); a != nil {
		// One tuple-typed result (older JAX) takes a layout per element.
		targets := shapes
		if len(shapes) == 1 && shapes[0].IsTuple() {
			targets = shapes[0].Tuple
		}
		ls, err := layoutList(a, len(targets))
		if err != nil {
			return nil, fmt.Errorf("result_layouts: %w", err)
		}
		for i := range targets {
			if err := setLayout(&targets[i], ls[i]); err != nil {
				return nil, fmt.Errorf("result_layouts[%d]: %w", i, err)
			}
		}
	}
	version, _ := intOf(op.Attr("api_version"))
	if d, ok := op.Attr("mhlo.backend_config").(mlir.DictAttr); ok {
		text, err := ffiDict(d)
		if err != nil {
			return nil, fmt.Errorf("mhlo.backend_config: %w", err)
		}
		attrs = append(attrs, hlo.Attr{Name: "backend_config", Value: hlo.Raw(text)})
		version = 4 // a dictionary config is the typed FFI's
	}
	if name, ok := apiVersions[version]; ok && version != 1 {
		attrs = append(attrs, hlo.Attr{Name: "api_version", Value: hlo.Enum(name)})
	}
	return attrs, nil
}

// layoutList reads an array of n dense index lists.
func layoutList(a mlir.Attr, n int) ([][]int64, error) {
	arr, ok := a.(mlir.ArrayAttr)
	if !ok || len(arr.Elems) != n {
		return nil, fmt.Errorf("want an array of %d layouts", n)
	}
	out := make([][]int64, n)
	for i, e := range arr.Elems {
		v, err := intsOf(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// setLayout gives the array shape s the minor-to-major order m2m, which
// must be a permutation of its dimensions.
func setLayout(s *hlo.Shape, m2m []int64) error {
	if !s.IsArray() || len(m2m) != s.Rank() {
		return fmt.Errorf("layout %v does not fit %s", m2m, s.HumanString())
	}
	seen := make([]bool, len(m2m))
	for _, d := range m2m {
		if d < 0 || int(d) >= len(m2m) || seen[d] {
			return fmt.Errorf("layout %v is not a permutation of %s's dimensions", m2m, s.HumanString())
		}
		seen[d] = true
	}
	s.Layout = &hlo.Layout{MinorToMajor: append([]int64(nil), m2m...)}
	return nil
}

// ffiDict prints a dictionary of FFI attributes as XLA stores it in
// backend_config: MLIR attribute syntax, `{mode = 86 : ui8, low = 1 : i32}`.
func ffiDict(d mlir.DictAttr) (string, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range d.Entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Name)
		b.WriteString(" = ")
		switch v := e.Value.(type) {
		case mlir.IntAttr:
			t, ok := v.Type.(mlir.IntType)
			if !ok {
				t = mlir.IntType{Width: 64}
			}
			sign := ""
			if t.Signedness != 0 {
				sign = string(t.Signedness)
			}
			fmt.Fprintf(&b, "%d : %si%d", v.Value, sign, t.Width)
		case mlir.BoolAttr:
			fmt.Fprint(&b, v.Value)
		case mlir.FloatAttr:
			name := "f64"
			if t, ok := v.Type.(mlir.FloatType); ok {
				name = t.Name
			}
			fmt.Fprintf(&b, "%v : %s", v.Value, name)
		case mlir.StringAttr:
			fmt.Fprintf(&b, "%q", v.Value)
		default:
			return "", fmt.Errorf("attribute %s of kind %T is not supported", e.Name, e.Value)
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}
