package hlo

import (
	"math"
	"strconv"
	"strings"
)

// Printing follows XLA's LiteralBase::Print: the element text is
// GetAsString (RoundTripFpToString for floats), arrays nest braces with
// XLA's spacing, rank >= 4 arrays carry /*iN=V*/ index comments, and pred
// arrays print their elements as 1 and 0 (scalars as true and false).

// String is XLA's Literal::ToString(): the shape, then the values over
// several lines for arrays of rank >= 2; tuples one element per line.
func (l *Literal) String() string {
	var b strings.Builder
	l.print(&b, true, false)
	return b.String()
}

// AppendPayload writes what XLA prints inside `constant(...)` in HLO text:
// the values on one line without the shape (Literal::
// PrintWithoutShapeOneline), or `{...}` for an elided literal.
func (l *Literal) AppendPayload(b *strings.Builder) {
	l.print(b, false, true)
}

func (l *Literal) print(b *strings.Builder, withShape, oneline bool) {
	switch {
	case l.elided:
		if withShape {
			l.shape.Append(b, false)
			b.WriteByte(' ')
		}
		b.WriteString("{...}")
	case l.shape.IsTuple():
		if oneline {
			b.WriteString("( ")
		} else {
			b.WriteString("(\n")
		}
		for i, e := range l.elems {
			if i > 0 {
				if oneline {
					b.WriteString(", ")
				} else {
					b.WriteString(",\n")
				}
			}
			e.print(b, withShape, oneline)
		}
		if oneline {
			b.WriteString(" )")
		} else {
			b.WriteString("\n)")
		}
	case l.shape.IsToken():
		b.WriteString("token")
	case l.shape.IsArray():
		if withShape {
			l.shape.Append(b, false)
			if l.shape.IsDynamic() {
				b.WriteByte('(')
				for d := range l.shape.Rank() {
					if d > 0 {
						b.WriteByte(',')
					}
					b.WriteString(strconv.FormatInt(l.DynamicSize(d), 10))
				}
				b.WriteByte(')')
			}
			b.WriteByte(' ')
		}
		p := arrayPrinter{l: l, b: b, oneline: oneline, idx: make([]int64, 0, l.shape.Rank())}
		p.array(0)
	default:
		l.shape.Append(b, false)
	}
}

type arrayPrinter struct {
	l       *Literal
	b       *strings.Builder
	oneline bool
	idx     []int64 // the indices of the enclosing braces
}

func (p *arrayPrinter) linebreak() string {
	if p.oneline {
		return " "
	}
	return "\n"
}

// array prints the sub-array at dimension d (the whole array when d is 0),
// as XLA's print_recursive does.
func (p *arrayPrinter) array(d int) {
	rank := p.l.shape.Rank()
	if d == rank {
		i := p.l.LinearIndex(p.idx)
		if p.l.shape.DType == Pred && rank > 0 {
			// XLA prints dense 0s and 1s for predicate arrays.
			p.b.WriteString(strconv.FormatUint(p.l.Bits(i), 10))
			return
		}
		p.b.WriteString(p.l.elementString(i))
		return
	}
	size := p.l.DynamicSize(d)
	p.open(d, size)
	for i := range size {
		p.idx = append(p.idx, i)
		p.array(d + 1)
		p.idx = p.idx[:len(p.idx)-1]
		if i < size-1 {
			p.b.WriteByte(',')
			if d < rank-1 {
				p.b.WriteString(p.linebreak())
			} else {
				p.b.WriteByte(' ')
			}
		}
	}
	p.close(d, size)
}

func (p *arrayPrinter) open(d int, size int64) {
	rank := p.l.shape.Rank()
	switch {
	case rank == 1:
		p.b.WriteByte('{')
	case d == rank-1: // the innermost braces of a matrix or higher
		if !p.oneline {
			p.b.WriteString("  ")
		}
		p.b.WriteByte('{')
		if size > 1 {
			p.b.WriteByte(' ')
		}
	case rank > 3 && d > 0:
		p.b.WriteString("{ /*i")
		p.b.WriteString(strconv.Itoa(d - 1))
		p.b.WriteByte('=')
		p.b.WriteString(strconv.FormatInt(p.idx[d-1], 10))
		p.b.WriteString("*/")
		if size > 0 {
			p.b.WriteString(p.linebreak())
		}
	default:
		p.b.WriteByte('{')
		p.b.WriteString(p.linebreak())
	}
}

func (p *arrayPrinter) close(d int, size int64) {
	rank := p.l.shape.Rank()
	switch {
	case rank == 1:
	case d == rank-1:
		if size > 1 {
			p.b.WriteByte(' ')
		}
	default:
		p.b.WriteString(p.linebreak())
	}
	p.b.WriteByte('}')
}

// elementString is XLA's GetAsString for element i.
func (l *Literal) elementString(i int) string {
	t := l.shape.DType
	switch d := l.data.(type) {
	case []bool:
		return strconv.FormatBool(d[i])
	case []float32:
		return formatF32(d[i])
	case []float64:
		return formatF64(d[i])
	case []complex64:
		return "(" + formatF32(real(d[i])) + ", " + formatF32(imag(d[i])) + ")"
	case []complex128:
		return "(" + formatF64(real(d[i])) + ", " + formatF64(imag(d[i])) + ")"
	}
	if f, ok := floatFormat(t); ok {
		bits := uint16(l.Bits(i))
		s := formatG(f.ToFloat64(bits), f.MaxDigits10())
		if n := f.NaNPayloadBits(); n > 0 && f.IsNaN(bits) {
			s += nanPayloadSuffix(uint64(bits), n)
		}
		return s
	}
	if t.IsUnsigned() {
		return strconv.FormatUint(l.Bits(i), 10)
	}
	return strconv.FormatInt(l.GetInt64(i), 10)
}

// formatF32 is XLA's RoundTripFpToString(float): 6 significant digits when
// they read back as the same float, else 9.
func formatF32(v float32) string {
	s := formatG(float64(v), 6)
	if r, err := strconv.ParseFloat(s, 32); err != nil || float32(r) != v {
		s = formatG(float64(v), 9)
	}
	if v != v {
		s += nanPayloadSuffix(uint64(math.Float32bits(v)), 23)
	}
	return s
}

// formatF64 is XLA's RoundTripFpToString(double): 15 digits, else 17.
func formatF64(v float64) string {
	s := formatG(v, 15)
	if r, err := strconv.ParseFloat(s, 64); err != nil || r != v {
		s = formatG(v, 17)
	}
	if v != v {
		s += nanPayloadSuffix(math.Float64bits(v), 52)
	}
	return s
}

// nanPayloadSuffix is "(0x...)" when a NaN's payload (its n mantissa bits)
// is not the plain quiet NaN's, else "".
func nanPayloadSuffix(bits uint64, n int) string {
	payload := bits & (1<<n - 1)
	if payload == 1<<(n-1) {
		return ""
	}
	return "(0x" + strconv.FormatUint(payload, 16) + ")"
}

// formatG formats v as C's printf("%.*g", prec, v) does: prec significant
// digits, scientific notation when the exponent is below -4 or at least
// prec, trailing zeros removed; inf, -inf, nan and -nan for the
// non-finite values.
func formatG(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		if math.Signbit(v) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if prec == 0 {
		prec = 1
	}
	e := strconv.FormatFloat(v, 'e', prec-1, 64)
	at := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[at+1:])
	if exp < -4 || exp >= prec {
		return trimZeros(e[:at]) + e[at:]
	}
	return trimZeros(strconv.FormatFloat(v, 'f', prec-1-exp, 64))
}

// trimZeros drops trailing zeros after a decimal point, and the point.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
