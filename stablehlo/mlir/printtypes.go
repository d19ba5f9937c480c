package mlir

import "strconv"

func (pr *printer) typ(t Type) {
	sb := &pr.sb
	switch t := t.(type) {
	case TensorType:
		sb.WriteString("tensor<")
		if t.Unranked {
			sb.WriteString("*x")
		}
		for _, d := range t.Dims {
			if d < 0 {
				sb.WriteString("?x")
			} else {
				sb.WriteString(strconv.FormatInt(d, 10) + "x")
			}
		}
		pr.typ(t.Elem)
		if t.Encoding != nil {
			sb.WriteString(", ")
			pr.attr(t.Encoding)
		}
		sb.WriteString(">")
	case IntType:
		sb.WriteString(intTypeText(t, false))
	case FloatType:
		sb.WriteString(t.Name)
	case ComplexType:
		sb.WriteString("complex<")
		pr.typ(t.Elem)
		sb.WriteString(">")
	case IndexType:
		sb.WriteString("index")
	case TupleType:
		sb.WriteString("tuple<")
		pr.typeList(t.Elems)
		sb.WriteString(">")
	case TokenType:
		sb.WriteString("!stablehlo.token")
	case FunctionType:
		sb.WriteString("(")
		pr.typeList(t.Inputs)
		sb.WriteString(") -> ")
		if len(t.Results) == 1 {
			if _, fn := t.Results[0].(FunctionType); !fn {
				pr.typ(t.Results[0])
				return
			}
		}
		sb.WriteString("(")
		pr.typeList(t.Results)
		sb.WriteString(")")
	case QuantType:
		pr.quant(t)
	case OpaqueType:
		sb.WriteString(t.Text)
	default:
		sb.WriteString("<nil type>")
	}
}

func (pr *printer) typeList(ts []Type) {
	for i, t := range ts {
		if i > 0 {
			pr.sb.WriteString(", ")
		}
		pr.typ(t)
	}
}

// intTypeText spells an integer type; quant storage writes unsigned as u8.
func intTypeText(t IntType, quant bool) string {
	w := strconv.Itoa(t.Width)
	switch {
	case t.Signedness == 'u' && quant:
		return "u" + w
	case t.Signedness == 'u':
		return "ui" + w
	case t.Signedness == 's':
		return "si" + w
	}
	return "i" + w
}

func (pr *printer) quant(q QuantType) {
	sb := &pr.sb
	sb.WriteString("!quant.uniform<")
	if st, ok := q.Storage.(IntType); ok {
		sb.WriteString(intTypeText(st, true))
	}
	if q.HasRange {
		sb.WriteString("<" + strconv.FormatInt(q.StorageMin, 10) + ":" + strconv.FormatInt(q.StorageMax, 10) + ">")
	}
	sb.WriteString(":")
	pr.typ(q.Expressed)
	if q.Axis >= 0 {
		sb.WriteString(":" + strconv.Itoa(q.Axis))
	}
	sb.WriteString(", ")
	if q.Axis >= 0 {
		sb.WriteString("{")
	}
	for i, s := range q.Scales {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(floatText(s, nil))
		if i < len(q.ZeroPoints) {
			sb.WriteString(":" + strconv.FormatInt(q.ZeroPoints[i], 10))
		}
	}
	if q.Axis >= 0 {
		sb.WriteString("}")
	}
	sb.WriteString(">")
}
