package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/npy"
)

// inputArray is one array given to --inputs, with where it came from.
type inputArray struct {
	npy.Array
	label string // "FILE.npz:member" or "FILE.npy", for errors
	pos   int    // position in a list of .npy files; -1 in an archive
}

// bindInputs gives m's entry parameters the arrays of --inputs (spec, an
// .npz archive or a comma-separated list of .npy files). Each array goes
// to the entry parameter of its name (the name as written, or without the
// ".N" suffix HLO dumps add), or else to the parameter of its number when
// it is named arg0, arg_0, input_0 or arr_0 (np.savez's names for
// positional arrays), or else, in a list of .npy files, to the parameter
// of its position. A bf16 parameter also takes uint16 bit patterns.
// dimVars are the values of a StableHLO entry's leading dimension
// variables (see stablehlo.Signature), which the arrays' shapes decide:
// a parameter among them needs no array, and one given must agree.
func bindInputs(arrays []inputArray, spec string, m *hlo.Module, dimVars []int64) ([]*hlo.Literal, error) {
	var err error
	params := m.Entry.Params
	args := make([]*hlo.Literal, len(params))
	from := make([]string, len(params))
	for _, a := range arrays {
		i := paramFor(a, params)
		if i < 0 {
			return nil, fmt.Errorf("array %s matches no parameter (%s); name arrays after parameters, or arg0, arg1, ... in parameter order", a.label, paramList(params))
		}
		if from[i] != "" {
			return nil, fmt.Errorf("parameter %s is given twice: arrays %s and %s", describe(params[i]), from[i], a.label)
		}
		from[i] = a.label
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
				describe(p), dimVars[i], from[i], args[i].GetInt64(0))
		case args[i] == nil:
			return nil, fmt.Errorf("no array for parameter %s in %s", describe(p), spec)
		}
	}
	return args, nil
}

// loadInputs reads the arrays of an .npz archive, or of a comma-separated
// list of .npy files (each named after its file).
func loadInputs(spec string) ([]inputArray, error) {
	if !strings.Contains(spec, ",") && !strings.HasSuffix(spec, ".npy") {
		arrays, err := npy.ReadNPZ(spec)
		if err != nil {
			return nil, err
		}
		out := make([]inputArray, len(arrays))
		for i, a := range arrays {
			out[i] = inputArray{a, spec + ":" + a.Name, -1}
		}
		return out, nil
	}
	var out []inputArray
	for i, path := range strings.Split(spec, ",") {
		l, err := npy.ReadFile(path)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(filepath.Base(path), ".npy")
		out = append(out, inputArray{npy.Array{Name: name, Lit: l}, path, i})
	}
	return out, nil
}

// positional matches the names that give a parameter number.
var positional = regexp.MustCompile(`^(?i:arg|input|arr)_?(\d+)$`)

// hloSuffix is the ".N" that HLO dumps append to instruction names.
var hloSuffix = regexp.MustCompile(`\.\d+$`)

// paramFor is the number of the parameter array a goes to, or -1.
func paramFor(a inputArray, params []*hlo.Instruction) int {
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
	if a.pos >= 0 && a.pos < len(params) {
		return a.pos
	}
	return -1
}

// fitParam checks that a has parameter p's element type and dimensions
// and returns it as a literal of p's shape (with p's layout); uint16
// arrays pass as bit patterns for bf16.
func fitParam(a inputArray, p *hlo.Instruction) (*hlo.Literal, error) {
	s, got := p.Shape, a.Lit.Shape()
	if !s.IsArray() {
		return nil, fmt.Errorf("parameter %s: --inputs gives arrays only", describe(p))
	}
	dtypeOK := got.DType == s.DType || (s.DType == hlo.BF16 && got.DType == hlo.U16)
	if !dtypeOK || !slices.Equal(got.Dims, s.Dims) {
		return nil, fmt.Errorf("parameter %s: array %s is %s", describe(p), a.label, got.HumanString())
	}
	return hlo.NewLiteralFromData(s, a.Lit.Data())
}

// describe names a parameter for errors: number, name and shape.
func describe(p *hlo.Instruction) string {
	return fmt.Sprintf("%d %q (%s)", p.ParamNumber, p.Name, p.Shape.HumanString())
}

func paramList(params []*hlo.Instruction) string {
	if len(params) == 0 {
		return "the module has none"
	}
	var names []string
	for _, p := range params {
		names = append(names, describe(p))
	}
	return "parameters " + strings.Join(names, ", ")
}

// writeOutputs writes the results of a run to a .npz archive, one array
// per leaf of the (untupled) results: output_0, output_1, ...
func writeOutputs(path string, results []*hlo.Literal) error {
	var arrays []npy.Array
	for _, r := range results {
		leaves(r, func(l *hlo.Literal) {
			arrays = append(arrays, npy.Array{Name: fmt.Sprintf("output_%d", len(arrays)), Lit: l})
		})
	}
	return npy.WriteNPZ(path, arrays)
}
