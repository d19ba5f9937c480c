package hloproto

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/axle-ml/axle/hlo"
)

// valueToProto writes an attribute value XLA's fields cannot carry
// exactly, by its Go type (hlo.Attr lists them).
func valueToProto(v any) (*AxleValue, error) {
	switch v := v.(type) {
	case int64:
		return &AxleValue{V: &AxleValue_Int{Int: v}}, nil
	case bool:
		return &AxleValue{V: &AxleValue_Bool{Bool: v}}, nil
	case float64:
		return &AxleValue{V: &AxleValue_Float{Float: v}}, nil
	case []int64:
		return &AxleValue{V: &AxleValue_Ints{Ints: &AxleInts{V: v}}}, nil
	case []bool:
		return &AxleValue{V: &AxleValue_Bools{Bools: &AxleBools{V: v}}}, nil
	case [][]int64:
		l := &AxleIntLists{}
		for _, x := range v {
			l.V = append(l.V, &AxleInts{V: x})
		}
		return &AxleValue{V: &AxleValue_IntLists{IntLists: l}}, nil
	case hlo.Enum:
		return &AxleValue{V: &AxleValue_Enum{Enum: string(v)}}, nil
	case string:
		return &AxleValue{V: &AxleValue_String_{String_: v}}, nil
	case hlo.Raw:
		return &AxleValue{V: &AxleValue_Raw{Raw: string(v)}}, nil
	case hlo.IotaReplicaGroups:
		return &AxleValue{V: &AxleValue_IotaGroups{IotaGroups: string(v)}}, nil
	case []hlo.Enum:
		l := &AxleStrings{}
		for _, e := range v {
			l.V = append(l.V, string(e))
		}
		return &AxleValue{V: &AxleValue_Enums{Enums: l}}, nil
	case hlo.Shape:
		s, err := shapeToProto(v)
		return &AxleValue{V: &AxleValue_Shape{Shape: s}}, err
	case []hlo.Shape:
		l := &AxleShapes{}
		for _, s := range v {
			sp, err := shapeToProto(s)
			if err != nil {
				return nil, err
			}
			l.V = append(l.V, sp)
		}
		return &AxleValue{V: &AxleValue_Shapes{Shapes: l}}, nil
	case *hlo.Literal:
		l, err := literalToProto(v)
		return &AxleValue{V: &AxleValue_Literal{Literal: l}}, err
	case *hlo.Window:
		return &AxleValue{V: &AxleValue_Window{Window: windowToProto(v)}}, nil
	case *hlo.ConvDimNumbers:
		return &AxleValue{V: &AxleValue_Conv{Conv: convToProto(v)}}, nil
	case hlo.PaddingConfig:
		return &AxleValue{V: &AxleValue_Padding{Padding: paddingToProto(v)}}, nil
	case []hlo.SliceDim:
		l := &AxleSlices{}
		for _, d := range v {
			l.V = append(l.V, &AxleSlice{Start: d.Start, Limit: d.Limit, Stride: d.Stride})
		}
		return &AxleValue{V: &AxleValue_Slices{Slices: l}}, nil
	}
	return nil, fmt.Errorf("attribute value of type %T has no proto form", v)
}

// valueFromProto reads what valueToProto wrote.
func valueFromProto(p *AxleValue, where string) (any, error) {
	switch v := p.GetV().(type) {
	case *AxleValue_Int:
		return v.Int, nil
	case *AxleValue_Bool:
		return v.Bool, nil
	case *AxleValue_Float:
		return v.Float, nil
	case *AxleValue_Ints:
		return nonNil(v.Ints.GetV()), nil
	case *AxleValue_Bools:
		return append([]bool{}, v.Bools.GetV()...), nil
	case *AxleValue_IntLists:
		l := [][]int64{}
		for _, x := range v.IntLists.GetV() {
			l = append(l, nonNil(x.GetV()))
		}
		return l, nil
	case *AxleValue_Enum:
		return hlo.Enum(v.Enum), nil
	case *AxleValue_String_:
		return v.String_, nil
	case *AxleValue_Raw:
		return hlo.Raw(v.Raw), nil
	case *AxleValue_IotaGroups:
		return hlo.IotaReplicaGroups(v.IotaGroups), nil
	case *AxleValue_Enums:
		l := []hlo.Enum{}
		for _, e := range v.Enums.GetV() {
			l = append(l, hlo.Enum(e))
		}
		return l, nil
	case *AxleValue_Shape:
		return shapeFromProto(v.Shape, where)
	case *AxleValue_Shapes:
		l := []hlo.Shape{}
		for _, sp := range v.Shapes.GetV() {
			s, err := shapeFromProto(sp, where)
			if err != nil {
				return nil, err
			}
			l = append(l, s)
		}
		return l, nil
	case *AxleValue_Literal:
		if v.Literal == nil {
			return nil, fmt.Errorf("%s: empty literal", where)
		}
		return literalFromProto(v.Literal, where)
	case *AxleValue_Window:
		return windowFromProto(v.Window), nil
	case *AxleValue_Conv:
		return convFromProto(v.Conv), nil
	case *AxleValue_Padding:
		return paddingFromProto(v.Padding), nil
	case *AxleValue_Slices:
		l := []hlo.SliceDim{}
		for _, d := range v.Slices.GetV() {
			l = append(l, hlo.SliceDim{Start: d.Start, Limit: d.Limit, Stride: d.Stride})
		}
		return l, nil
	}
	return nil, fmt.Errorf("%s: attribute value has no known kind", where)
}

func nonNil(l []int64) []int64 { return append([]int64{}, l...) }

// sameValue reports whether a value read back from XLA's fields is the one
// written, treating nil and empty lists alike as the text printer does.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case hlo.Shape:
		b, ok := b.(hlo.Shape)
		return ok && a.Equal(b) && sameLayouts(a, b)
	case []hlo.Shape:
		b, ok := b.([]hlo.Shape)
		return ok && slices.EqualFunc(a, b, func(x, y hlo.Shape) bool { return x.Equal(y) && sameLayouts(x, y) })
	case *hlo.Literal:
		b, ok := b.(*hlo.Literal)
		return ok && a.IsElided() == b.IsElided() && a.Shape().Equal(b.Shape()) && (a.IsElided() || a.Equal(b))
	}
	return fmt.Sprintf("%T %v", a, deref(a)) == fmt.Sprintf("%T %v", b, deref(b))
}

func sameLayouts(a, b hlo.Shape) bool {
	if !a.Layout.Equal(b.Layout) || len(a.Tuple) != len(b.Tuple) {
		return false
	}
	for i := range a.Tuple {
		if !sameLayouts(a.Tuple[i], b.Tuple[i]) {
			return false
		}
	}
	return true
}

func deref(v any) any {
	if r := reflect.ValueOf(v); r.Kind() == reflect.Pointer && !r.IsNil() {
		return r.Elem().Interface()
	}
	return v
}
