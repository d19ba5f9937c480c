package npy

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// Input is one array given as a module's argument, with where it came
// from (`axle run --inputs`, ahead-of-time commands).
type Input struct {
	Array
	Label string // "FILE.npz:member" or "FILE.npy", for errors
	Pos   int    // position in a list of .npy files; -1 in an archive
}

// BindInputs gives m's entry parameters the arrays of --inputs (spec, an
// .npz archive or a comma-separated list of .npy files). Each array goes
// to the entry parameter of its name (the name as written, or without the
// ".N" suffix HLO dumps add), or else to the parameter of its number when
// it is named arg0, arg_0, input_0 or arr_0 (np.savez's names for
// positional arrays), or else, in a list of .npy files, to the parameter
// of its position. A bf16 parameter also takes uint16 bit patterns.
// dimVars are the values of a StableHLO entry's leading dimension
// variables (see stablehlo.Signature), which the arrays' shapes decide:
// a parameter among them needs no array, and one given must agree.
func BindInputs(arrays []Input, spec string, m *hlo.Module, dimVars []int64) ([]*hlo.Literal, error) {
	var err error
	params := m.Entry.Params
	args := make([]*hlo.Literal, len(params))
	from := make([]string, len(params))
	for _, a := range arrays {
		i := ParamFor(a, params)
		if i < 0 {
			return nil, fmt.Errorf("array %s matches no parameter (%s); name arrays after parameters, or arg0, arg1, ... in parameter order", a.Label, paramList(params))
		}
		if from[i] != "" {
			return nil, fmt.Errorf("parameter %s is given twice: arrays %s and %s", DescribeParam(params[i]), from[i], a.Label)
		}
		from[i] = a.Label
		if args[i], err = fitParam(a, params[i]); err != nil {
			return nil, err
		}
	}
	for i, p := range params {
		switch {
		case i < len(dimVars) && args[i] == nil:
			args[i] = hlo.NewLiteral(p.Shape)
			args[i].SetInt64(0, dimVars[i])
		case i < len(dimVars) && args[i].Len() == 1 && args[i].GetInt64(0) != dimVars[i]:
			return nil, fmt.Errorf("parameter %s is a dimension variable of value %d by the other arrays' shapes, but array %s gives %d",
				DescribeParam(p), dimVars[i], from[i], args[i].GetInt64(0))
		case args[i] == nil:
			return nil, fmt.Errorf("no array for parameter %s in %s", DescribeParam(p), spec)
		}
	}
	return args, nil
}

// LoadInputs reads the arrays of an .npz archive, or of a comma-separated
// list of .npy files (each named after its file).
func LoadInputs(spec string) ([]Input, error) {
	if !strings.Contains(spec, ",") && !strings.HasSuffix(spec, ".npy") {
		arrays, err := ReadNPZ(spec)
		if err != nil {
			return nil, err
		}
		out := make([]Input, len(arrays))
		for i, a := range arrays {
			out[i] = Input{a, spec + ":" + a.Name, -1}
		}
		return out, nil
	}
	var out []Input
	for i, path := range strings.Split(spec, ",") {
		l, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(path), ".npy")
		out = append(out, Input{Array{Name: name, Lit: l}, path, i})
	}
	return out, nil
}

// Position is the parameter number a positional array name (arg0, arg_0,
// input_0, arr_0: np.savez's names) gives, or -1.
func Position(name string) int {
	m := positional.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// positional matches the names that give a parameter number.
var positional = regexp.MustCompile(`^(?i:arg|input|arr)_?(\d+)$`)

// hloSuffix is the ".N" that HLO dumps append to instruction names.
var hloSuffix = regexp.MustCompile(`\.\d+$`)

// ParamFor is the number of the parameter array a goes to, or -1.
func ParamFor(a Input, params []*hlo.Instruction) int {
	for _, name := range []func(*hlo.Instruction) string{
		func(p *hlo.Instruction) string { return p.Name },
		func(p *hlo.Instruction) string { return hloSuffix.ReplaceAllString(p.Name, "") },
	} {
		if i := slices.IndexFunc(params, func(p *hlo.Instruction) bool { return name(p) == a.Name }); i >= 0 {
			return i
		}
	}
	if m := positional.FindStringSubmatch(a.Name); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n < len(params) {
			return n
		}
		return -1
	}
	if a.Pos >= 0 && a.Pos < len(params) {
		return a.Pos
	}
	return -1
}

// fitParam checks that a has parameter p's element type and dimensions
// and returns it as a literal of p's shape (with p's layout); uint16
// arrays pass as bit patterns for bf16.
func fitParam(a Input, p *hlo.Instruction) (*hlo.Literal, error) {
	s, got := p.Shape, a.Lit.Shape()
	if !s.IsArray() {
		return nil, fmt.Errorf("parameter %s: arrays only", DescribeParam(p))
	}
	dtypeOK := got.DType == s.DType || (s.DType == hlo.BF16 && got.DType == hlo.U16)
	if !dtypeOK || !slices.Equal(got.Dims, s.Dims) {
		return nil, fmt.Errorf("parameter %s: array %s is %s", DescribeParam(p), a.Label, got.HumanString())
	}
	return hlo.NewLiteralFromData(s, a.Lit.Data())
}

// DescribeParam names a parameter for errors: number, name and shape.
func DescribeParam(p *hlo.Instruction) string {
	return fmt.Sprintf("%d %q (%s)", p.ParamNumber, p.Name, p.Shape.HumanString())
}

func paramList(params []*hlo.Instruction) string {
	if len(params) == 0 {
		return "the module has none"
	}
	var names []string
	for _, p := range params {
		names = append(names, DescribeParam(p))
	}
	return "parameters " + strings.Join(names, ", ")
}
