package stablehlo

import (
	"fmt"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// dtypeOf maps an MLIR element type to an HLO element type.
func dtypeOf(t mlir.Type) (hlo.DType, error) {
	switch t := t.(type) {
	case mlir.IntType:
		if t.Width == 1 {
			return hlo.Pred, nil
		}
		prefix := "s"
		if t.Signedness == 'u' {
			prefix = "u"
		}
		if d, ok := hlo.DTypeByName(fmt.Sprintf("%s%d", prefix, t.Width)); ok {
			return d, nil
		}
	case mlir.FloatType:
		if d, ok := hlo.DTypeByName(strings.ToLower(t.Name)); ok && d.IsFloat() {
			return d, nil
		}
	case mlir.ComplexType:
		switch e := t.Elem.(type) {
		case mlir.FloatType:
			switch e.Name {
			case "f32":
				return hlo.C64, nil
			case "f64":
				return hlo.C128, nil
			}
		}
	case mlir.IndexType:
		return hlo.S64, nil
	case mlir.QuantType:
		// A quantized tensor is held as its storage integers; the ops
		// that read it dequantize (see quant.go).
		return dtypeOf(t.Storage)
	}
	return 0, fmt.Errorf("element type %s: %w", typeString(t), ErrUnsupported)
}

// shapeOfType maps an MLIR type to an HLO shape; `?` dimensions are -1
// (hlo.Unbounded) until refined.
func shapeOfType(t mlir.Type) (hlo.Shape, error) {
	switch t := t.(type) {
	case mlir.TensorType:
		if t.Unranked {
			return hlo.Shape{}, fmt.Errorf("unranked tensor: %w", ErrUnsupported)
		}
		// A `?` dimension becomes hlo.Unbounded (-1): the instruction
		// built with it is refined by shape inference (see refine.go).
		dt, err := dtypeOf(t.Elem)
		if err != nil {
			return hlo.Shape{}, err
		}
		return hlo.ArrayShape(dt, t.Dims...), nil
	case mlir.TupleType:
		elems := make([]hlo.Shape, len(t.Elems))
		for i, e := range t.Elems {
			s, err := shapeOfType(e)
			if err != nil {
				return hlo.Shape{}, err
			}
			elems[i] = s
		}
		return hlo.TupleShape(elems...), nil
	case mlir.TokenType:
		return hlo.TokenShape(), nil
	case mlir.OpaqueType:
		if t.Text == "!stablehlo.token" {
			return hlo.TokenShape(), nil
		}
	}
	// A bare scalar element type (i32) is a rank-0 tensor.
	dt, err := dtypeOf(t)
	if err != nil {
		return hlo.Shape{}, err
	}
	return hlo.ArrayShape(dt), nil
}

// fitsType checks a concrete argument shape against a (possibly dynamic)
// declared type.
func fitsType(s hlo.Shape, t mlir.Type) error {
	tt, ok := t.(mlir.TensorType)
	if !ok {
		want, err := shapeOfType(t)
		if err != nil {
			return err
		}
		if !want.Compatible(s) {
			return fmt.Errorf("shape %s does not fit type %s", s.HumanString(), typeString(t))
		}
		return nil
	}
	dt, err := dtypeOf(tt.Elem)
	if err != nil {
		return err
	}
	if s.DType != dt || (!tt.Unranked && len(s.Dims) != len(tt.Dims)) {
		return fmt.Errorf("shape %s does not fit type %s", s.HumanString(), typeString(t))
	}
	for i, d := range tt.Dims {
		if d >= 0 && s.Dims[i] != d {
			return fmt.Errorf("shape %s does not fit type %s (dimension %d)", s.HumanString(), typeString(t), i)
		}
	}
	return nil
}

// resultShape is the shape of an op's result i.
func resultShape(op *mlir.Op, i int) (hlo.Shape, error) {
	if i >= len(op.Results) {
		return hlo.Shape{}, fmt.Errorf("has no result %d", i)
	}
	return shapeOfType(op.Results[i].Type)
}

// elemType returns the element type of a tensor type (or the type itself).
func elemType(t mlir.Type) mlir.Type {
	if tt, ok := t.(mlir.TensorType); ok {
		return tt.Elem
	}
	return t
}

// typeString prints a type roughly as MLIR does, for messages.
func typeString(t mlir.Type) string {
	switch t := t.(type) {
	case mlir.TensorType:
		var b strings.Builder
		b.WriteString("tensor<")
		if t.Unranked {
			b.WriteString("*x")
		}
		for _, d := range t.Dims {
			if d < 0 {
				b.WriteString("?x")
			} else {
				fmt.Fprintf(&b, "%dx", d)
			}
		}
		b.WriteString(typeString(t.Elem) + ">")
		return b.String()
	case mlir.IntType:
		p := "i"
		switch t.Signedness {
		case 's':
			p = "si"
		case 'u':
			p = "ui"
		}
		return fmt.Sprintf("%s%d", p, t.Width)
	case mlir.FloatType:
		return t.Name
	case mlir.ComplexType:
		return "complex<" + typeString(t.Elem) + ">"
	case mlir.IndexType:
		return "index"
	case mlir.TokenType:
		return "!stablehlo.token"
	case mlir.QuantType:
		return "!quant.uniform<...>"
	case mlir.OpaqueType:
		return t.Text
	case mlir.TupleType:
		parts := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			parts[i] = typeString(e)
		}
		return "tuple<" + strings.Join(parts, ", ") + ">"
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", t)
}
