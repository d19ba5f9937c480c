package stablehlo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Attributes HLO has no field for (jax.result_info, sdy.* shardings,
// mhlo.frontend_attributes, argument and result annotations) are kept as
// HLO frontend attributes, `{name="value",...}`, on the parameter, the
// instruction or the module.

// frontendValue prints an attribute value for a frontend attribute; ok is
// false for values with no useful text.
func frontendValue(a mlir.Attr) (string, bool) {
	switch a := a.(type) {
	case mlir.StringAttr:
		return a.Value, true
	case mlir.IntAttr:
		return strconv.FormatInt(a.Value, 10), true
	case mlir.BoolAttr:
		return strconv.FormatBool(a.Value), true
	case mlir.DialectAttr:
		return "#" + a.Name + "<" + a.Raw + ">", true
	case mlir.EnumAttr:
		return a.Value, true
	}
	return "", false
}

// frontendText prints name/value pairs sorted by name as HLO's
// frontend_attributes text: `{name="value"}`, names quoted only when they
// are not identifiers.
func frontendText(kv map[string]string) string {
	names := make([]string, 0, len(kv))
	for k := range kv {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		key := k
		if strings.ContainsFunc(k, func(r rune) bool {
			return !(r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			key = strconv.Quote(k)
		}
		parts[i] = key + "=" + strconv.Quote(kv[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// keptAnnotation reports whether a function argument or result attribute
// is kept: the JAX, Shardy and MHLO ones other than those HLO models.
func keptAnnotation(name string) bool {
	switch name {
	case "mhlo.sharding", "mhlo.layout_mode":
		return false
	}
	return strings.HasPrefix(name, "jax.") || strings.HasPrefix(name, "sdy.") || strings.HasPrefix(name, "mhlo.")
}

// dictEntries returns entry i of an ArrayAttr of DictAttr (arg_attrs,
// res_attrs).
func dictEntries(a mlir.Attr, i int) []mlir.NamedAttr {
	arr, ok := a.(mlir.ArrayAttr)
	if !ok || i >= len(arr.Elems) {
		return nil
	}
	d, _ := arr.Elems[i].(mlir.DictAttr)
	return d.Entries
}

// annotate sets the parameter's sharding and frontend attributes from the
// entry function's arg_attrs.
func annotateParam(f *mlir.Op, i int, p *hlo.Instruction) {
	kv := map[string]string{}
	for _, e := range dictEntries(f.Attr("arg_attrs"), i) {
		if e.Name == "mhlo.sharding" {
			if v := stringAttr(e.Value); v != "" {
				p.SetAttr("sharding", hlo.Raw(v))
			}
			continue
		}
		if v, ok := frontendValue(e.Value); ok && keptAnnotation(e.Name) {
			kv[e.Name] = v
		}
	}
	if len(kv) > 0 {
		p.SetAttr("frontend_attributes", hlo.Raw(frontendText(kv)))
	}
}

// annotateModule keeps the entry's result attributes (res_attrs) as module
// frontend attributes named result<i>.<name>.
func annotateModule(m *hlo.Module, f *mlir.Op, results int) {
	kv := map[string]string{}
	for i := range results {
		for _, e := range dictEntries(f.Attr("res_attrs"), i) {
			if v, ok := frontendValue(e.Value); ok && (keptAnnotation(e.Name) || e.Name == "mhlo.sharding") {
				kv[fmt.Sprintf("result%d.%s", i, e.Name)] = v
			}
		}
	}
	if len(kv) > 0 {
		m.Attrs = append(m.Attrs, hlo.Attr{Name: "frontend_attributes", Value: hlo.Raw(frontendText(kv))})
	}
}

// annotateOp carries an op's mhlo.sharding and mhlo.frontend_attributes to
// the instruction of its single result.
func annotateOp(op *mlir.Op, res []*hlo.Instruction) {
	if len(res) != 1 || res[0].Opcode == hlo.OpParameter {
		return
	}
	if sh := stringAttr(op.Attr("mhlo.sharding")); sh != "" {
		res[0].SetAttr("sharding", hlo.Raw(sh))
	}
	if d, ok := op.Attr("mhlo.frontend_attributes").(mlir.DictAttr); ok {
		kv := map[string]string{}
		for _, e := range d.Entries {
			if v, ok := frontendValue(e.Value); ok {
				kv[e.Name] = v
			}
		}
		if len(kv) > 0 {
			res[0].SetAttr("frontend_attributes", hlo.Raw(frontendText(kv)))
		}
	}
}
