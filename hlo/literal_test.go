package hlo

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// literalCorpus is the shared HLO corpus, relative to this package.
const literalCorpus = "../../shared/corpus/hlo"

func readLiteralCorpus(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(literalCorpus, rel))
	if err != nil {
		if os.IsNotExist(err) {
			t.Skipf("shared corpus not found (%v): clone the project with ../shared beside it to run corpus tests", err)
		}
		t.Fatal(err)
	}
	return string(b)
}

// testShape parses the simple shape strings of the tests and the corpus
// ("f32[2,3]{1,0}", "s32[<=3,2]", "(f32[2], s32[])", "/*foo*/f32[1]"):
// element type, dimensions (bounded dynamic ones too), tuples; layouts and
// comments are skipped. The real shape parser lives in hlotext.
func testShape(t *testing.T, text string) Shape {
	t.Helper()
	s, rest := parseTestShape(t, strings.TrimSpace(text))
	if strings.TrimSpace(rest) != "" {
		t.Fatalf("shape %q: trailing %q", text, rest)
	}
	return s
}

var testShapeRE = regexp.MustCompile(`^([a-z0-9]+)\[([^\]]*)\](\{[0-9,]*\})?`)

func parseTestShape(t *testing.T, text string) (Shape, string) {
	t.Helper()
	for strings.HasPrefix(text, "/*") {
		text = strings.TrimSpace(text[strings.Index(text, "*/")+2:])
	}
	if rest, ok := strings.CutPrefix(text, "("); ok {
		var elems []Shape
		for {
			rest = strings.TrimSpace(rest)
			if r, ok := strings.CutPrefix(rest, ")"); ok {
				return TupleShape(elems...), r
			}
			if r, ok := strings.CutPrefix(rest, ","); ok {
				rest = r
				continue
			}
			var e Shape
			e, rest = parseTestShape(t, rest)
			elems = append(elems, e)
		}
	}
	m := testShapeRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("cannot parse shape %q", text)
	}
	dt, ok := DTypeByName(m[1])
	if !ok {
		t.Fatalf("unknown element type in %q", text)
	}
	s := Shape{DType: dt, Dims: []int64{}}
	if m[2] != "" {
		for i, d := range strings.Split(m[2], ",") {
			bounded, dyn := strings.CutPrefix(d, "<=")
			n, err := strconv.ParseInt(bounded, 10, 64)
			if d == "?" {
				n, dyn, err = Unbounded, true, nil
			}
			if err != nil {
				t.Fatalf("shape %q: %v", text, err)
			}
			s.Dims = append(s.Dims, n)
			if dyn {
				s.SetDynamic(i, true)
			}
		}
	}
	s.SetDefaultLayout()
	return s, text[len(m[0]):]
}

// mustLiteral wraps a constructor's result for a test that cannot go on
// without it.
func mustLiteral(t *testing.T) func(*Literal, error) *Literal {
	return func(l *Literal, err error) *Literal {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

func seq[T int32 | float32](from, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(from + i)
	}
	return out
}

func scalarOf(t DType, v float64) *Literal {
	l := NewLiteral(ScalarShape(t))
	l.SetFloat64(0, v)
	return l
}

// TestToStringCorpus builds each literal of literal_test.cc as its C++
// construction in literals/INDEX.tsv does and compares Literal::ToString's
// recorded output byte for byte.
func TestToStringCorpus(t *testing.T) {
	readLiteralCorpus(t, "literals/INDEX.tsv")
	r4 := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19,
		101, 102, 103, 104, 105, 106, 107, 108, 109, 201, 202, 203, 204, 205, 206, 207, 208, 209}
	projected := []float32{1, 2, 1001, 1002, 2001, 2002}
	must := mustLiteral(t)
	dyn1 := must(LiteralFromSlice(seq[int32](1, 6), 3, 2))
	if err := dyn1.SetDynamicSize(0, 2); err != nil {
		t.Fatal(err)
	}
	dyn2 := must(LiteralFromSlice(seq[int32](1, 6), 2, 3))
	if err := dyn2.SetDynamicSize(1, 2); err != nil {
		t.Fatal(err)
	}
	cases := map[string]*Literal{
		"LiteralScalarToString_pred_true.txt":       ScalarLiteral(true),
		"LiteralScalarToString_pred_false.txt":      ScalarLiteral(false),
		"LiteralScalarToString_u32.txt":             ScalarLiteral(uint32(42)),
		"LiteralScalarToString_s32.txt":             ScalarLiteral(int32(-999)),
		"LiteralScalarToString_f32.txt":             ScalarLiteral(float32(3.14)),
		"LiteralScalarToString_f16.txt":             scalarOf(F16, 0.5),
		"LiteralScalarToString_c64.txt":             ScalarLiteral(complex64(complex(3.14, 2.78))),
		"LiteralScalarToString_c128.txt":            ScalarLiteral(complex(3.14, 2.78)),
		"LiteralScalarToString_bf16.txt":            scalarOf(BF16, 0.5),
		"LiteralScalarToString_bf16_truncated.txt":  scalarOf(BF16, float64(float32(3.14))),
		"LiteralScalarToString_bf16_truncated2.txt": scalarOf(BF16, float64(float32(9.001))),
		"LiteralVectorToString.txt":                 must(LiteralFromSlice([]bool{true, false, true})),
		"R2ToString.txt":                            must(LiteralFromSlice(seq[int32](1, 6), 3, 2)),
		"R2DynamicToString_1.txt":                   dyn1,
		"R2DynamicToString_2.txt":                   dyn2,
		"R3ToString.txt":                            must(LiteralFromSlice(seq[int32](1, 6), 3, 2, 1)),
		"R6ToString.txt":                            NewLiteral(ArrayShape(S32, 2, 2, 1, 1, 1, 2)),
		"TupleToString.txt":                         MakeTupleLiteral(ScalarLiteral(float32(1)), must(LiteralFromSlice([]float32{1, 2, 3, 4}, 2, 2))),
		"CreateR3FromArray3d.txt":                   must(LiteralFromSlice(seq[float32](1, 12), 2, 3, 2)),
		"LiteralR4F32ProjectedStringifies.txt":      must(LiteralFromSlice(append(projected, projected...), 1, 2, 3, 2)),
		"LiteralR4F32Stringifies.txt":               must(LiteralFromSlice(r4, 2, 2, 3, 3)),
	}
	index := readLiteralCorpus(t, "literals/INDEX.tsv")
	for _, line := range strings.Split(strings.TrimSpace(index), "\n")[1:] {
		file := strings.Split(line, "\t")[0]
		lit, ok := cases[file]
		if !ok {
			t.Errorf("%s: no construction in this test", file)
			continue
		}
		want := readLiteralCorpus(t, "literals/"+file)
		if got := lit.String(); got != want {
			t.Errorf("%s:\n--- got\n%s\n--- want\n%s", file, got, want)
		}
	}
}

// unescapeTSV undoes the corpus TSV escapes \t, \n and \\.
func unescapeTSV(s string) string {
	return strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\\`, `\`).Replace(s)
}

// TestConstantPayloadsCorpus parses every constant payload of the corpus;
// where the file is one XLA printed (the parser round-trip cases), printing
// must give the payload back byte for byte. Every payload must be a fixed
// point of print and parse.
func TestConstantPayloadsCorpus(t *testing.T) {
	f := readLiteralCorpus(t, "literals/constant_payloads.tsv")
	sc := bufio.NewScanner(strings.NewReader(f))
	sc.Buffer(nil, 1<<20)
	sc.Scan() // header
	n, exact := 0, 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		file, line, shape, payload := cols[0], cols[1], unescapeTSV(cols[2]), unescapeTSV(cols[3])
		where := file + ":" + line
		s := testShape(t, shape)
		lit, err := ParseLiteral(s, payload)
		if err != nil {
			t.Errorf("%s: ParseLiteral(%s, %q): %v", where, shape, payload, err)
			continue
		}
		n++
		var b strings.Builder
		lit.AppendPayload(&b)
		printed := b.String()
		if strings.HasPrefix(file, "parser/roundtrip") {
			exact++
			if printed != payload {
				t.Errorf("%s: printed %q, want %q", where, printed, payload)
			}
		}
		again, err := ParseLiteral(s, printed)
		if err != nil {
			t.Errorf("%s: re-parse of %q: %v", where, printed, err)
			continue
		}
		if !again.Equal(lit) {
			t.Errorf("%s: %q re-parses to a different literal", where, printed)
		}
	}
	if n < 180 || exact < 50 {
		t.Errorf("only %d payloads parsed, %d checked exactly", n, exact)
	}
}

// TestParseErrorsCorpus runs the constants of XLA's parser error cases:
// each must be rejected, with XLA's message where the corpus has it.
func TestParseErrorsCorpus(t *testing.T) {
	dir := filepath.Join(literalCorpus, "parser/errors")
	files, _ := filepath.Glob(filepath.Join(dir, "*.hlo"))
	if len(files) == 0 {
		t.Skip("shared corpus not found: clone the project with ../shared beside it to run corpus tests")
	}
	constRE := regexp.MustCompile(`= (\S+) constant\((.*)\)\s*$`)
	checked := 0
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".hlo")
		if !strings.HasPrefix(name, "Constant") && !strings.HasPrefix(name, "LiteralDimensions") &&
			!strings.HasPrefix(name, "InvalidNanPayload") {
			continue
		}
		src, _ := os.ReadFile(path)
		m := constRE.FindStringSubmatch(strings.Split(string(src), "\n")[3])
		if m == nil {
			t.Errorf("%s: no constant on line 4", name)
			continue
		}
		_, err := ParseLiteral(testShape(t, m[1]), m[2])
		if err == nil {
			t.Errorf("%s: constant(%s) accepted", name, m[2])
			continue
		}
		checked++
		if _, ok := err.(*LiteralError); !ok {
			t.Errorf("%s: error %v is not a *LiteralError", name, err)
		}
		if want, rerr := os.ReadFile(filepath.Join(dir, name+".error.txt")); rerr == nil &&
			!strings.Contains(err.(*LiteralError).Msg, string(want)) {
			t.Errorf("%s: error %q does not contain XLA's %q", name, err, want)
		}
	}
	if checked < 15 {
		t.Errorf("only %d error cases checked", checked)
	}
}

func parseOK(t *testing.T, shape, text string) *Literal {
	t.Helper()
	l, err := ParseLiteral(testShape(t, shape), text)
	if err != nil {
		t.Fatalf("ParseLiteral(%s, %q): %v", shape, text, err)
	}
	return l
}

func payload(l *Literal) string {
	var b strings.Builder
	l.AppendPayload(&b)
	return b.String()
}

// TestParseValues checks parsed values against hand-worked expectations.
func TestParseValues(t *testing.T) {
	bits := func(l *Literal) []uint64 {
		out := make([]uint64, l.Len())
		for i := range out {
			out[i] = l.Bits(i)
		}
		return out
	}
	cases := []struct {
		shape, text string
		want        []uint64
	}{
		{"u64[]", "18446744073709551615", []uint64{math.MaxUint64}},
		{"u64[]", "-1", []uint64{math.MaxUint64}}, // XLA's bit pattern rule
		{"u64[]", "9223372036854775808", []uint64{1 << 63}},
		{"s64[2]", "{-9223372036854775808, 9223372036854775807}", []uint64{1 << 63, 1<<63 - 1}},
		{"s4[2]", "{-8, 7}", []uint64{0x8, 0x7}},
		{"u4[2]", "{0, 15}", []uint64{0, 15}},
		{"s2[2]", "{-2, 1}", []uint64{0x2, 0x1}},
		{"pred[4]", "{true, false, 1, 2}", []uint64{1, 0, 1, 1}},
		{"f32[]", "-0", []uint64{0x80000000}},
		{"f32[]", "1e-50", []uint64{0}}, // underflows to zero, as in XLA
		{"f32[3]", "{nan, -nan, nan(0x1)}", []uint64{0x7fc00000, 0xffc00000, 0x7f800001}},
		{"f64[2]", "{nan(0x8000000000000), -nan(0x123)}", []uint64{0x7ff8000000000000, 0xfff0000000000123}},
		{"bf16[2]", "{-nan(0x7f), -nan(0x3f)}", []uint64{0xffff, 0xffbf}},
		{"bf16[]", "-65505", []uint64{0xc780}},
		{"bf16[]", "3.14", []uint64{0x4049}},
		{"f16[3]", "{65504, -inf, 1e-8}", []uint64{0x7bff, 0xfc00, 0x0000}},
		{"f8e4m3fn[3]", "{nan, 7, -nan}", []uint64{0x7f, 0x4e, 0xff}},
		{"f8e4m3fn[]", "inf", []uint64{0x7f}}, // no infinity: NaN, as static_cast gives
		{"f8e4m3b11fnuz[2]", "{-nan, 7}", []uint64{0x80, 0x6e}},
		{"f8e5m2[2]", "{nan(0x1), -inf}", []uint64{0x7d, 0xfc}},
		{"f8e8m0fnu[2]", "{1, 0.1}", []uint64{0x7f, 0x7c}},
		{"f4e2m1fn[3]", "{100, -0.25, 2.5}", []uint64{0x7, 0x8, 0x4}},
		// Hand-worked: 7.5 = 2^2·1.875 (0 11 111), 3.1415 rounds to 3.25 =
		// 2^1·1.625 (0 10 101), 100 saturates to 7.5; in e3m2 (bias 3),
		// 28 = 2^4·1.75 (0 111 11), 0.0625 = 2^-2·1/4 subnormal, 3.1415 to 3.
		{"f6e2m3fn[4]", "{7.5, -0.125, 3.1415, 100}", []uint64{0x1f, 0x21, 0x15, 0x1f}},
		{"f6e3m2fn[3]", "{28, 0.0625, 3.1415}", []uint64{0x1f, 0x01, 0x12}},
		{"f32[2,2]", "{{1,2}{3 4}}", []uint64{0x3f800000, 0x40000000, 0x40400000, 0x40800000}}, // commas optional, as in XLA
		{"f32[1]", "{ /*a*/ 5 // line\n }", []uint64{0x40a00000}},
		{"f32[]", ".5", []uint64{0x3f000000}},
		{"f32[]", "-1.5e+1", []uint64{0xc1700000}},
	}
	for _, c := range cases {
		got := bits(parseOK(t, c.shape, c.text))
		if len(got) != len(c.want) {
			t.Errorf("%s %q: %d elements, want %d", c.shape, c.text, len(got), len(c.want))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %q: element %d = %#x, want %#x", c.shape, c.text, i, got[i], c.want[i])
			}
		}
	}
	c := parseOK(t, "c64[2]", "{(1, -2.5), (inf, nan(0x3))}")
	want := []uint64{0x3f800000, 0xc0200000, 0x7f800000, 0x7f800003}
	for i, v := range c.Data().([]complex64) {
		re, im := uint64(math.Float32bits(real(v))), uint64(math.Float32bits(imag(v)))
		if re != want[2*i] || im != want[2*i+1] {
			t.Errorf("c64 element %d = %#x, %#x; want %#x, %#x", i, re, im, want[2*i], want[2*i+1])
		}
	}
}

// TestParseStructure checks elided constants, tuples and empty arrays.
func TestParseStructure(t *testing.T) {
	if l := parseOK(t, "f32[100,100]", " {...} "); !l.IsElided() || payload(l) != "{...}" {
		t.Errorf("elided: %v %q", l.IsElided(), payload(l))
	}
	if l := parseOK(t, "(f32[], s32[])", "{...}"); !l.IsElided() {
		t.Errorf("elided tuple not elided")
	}
	tup := parseOK(t, "(f32[2], (s32[], pred[]), f32[3])", "( {1, 2}, (7, true), {...} )")
	if got, want := payload(tup), "( {1, 2}, ( 7, true ), {...} )"; got != want {
		t.Errorf("tuple printed %q, want %q", got, want)
	}
	if e := tup.Elements(); len(e) != 3 || !e[2].IsElided() || e[1].Elements()[0].GetInt64(0) != 7 {
		t.Errorf("tuple elements wrong")
	}
	if got := payload(parseOK(t, "()", "( )")); got != "(  )" {
		t.Errorf("empty tuple printed %q", got)
	}
	if got := payload(parseOK(t, "f32[0,2]", "{ }")); got != "{  }" {
		t.Errorf("empty matrix printed %q", got)
	}
}

// TestParseErrors checks messages and byte offsets of bad literals.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		shape, text string
		offset      int
		msg         string
	}{
		{"u8[2]", "{1, 256}", 4, "value 256 is out of range for literal's primitive type U8 namely [0, 255]."},
		{"u8[]", "-1", 0, "value -1 is out of range for literal's primitive type U8 namely [0, 255]."},
		{"s8[]", "-129", 0, "value -129 is out of range for literal's primitive type S8 namely [-128, 127]."},
		{"s64[]", "9223372036854775808", 0, "out of range for literal's primitive type S64"},
		{"u64[]", "18446744073709551616", 0, "out of range for literal's primitive type U64"},
		{"f32[]", "1e39", 0, "value 1e+39 is out of range for literal's primitive type F32 namely [-3.40282e+38, 3.40282e+38]."},
		{"bf16[]", "1e39", 0, "value 1e+39 is out of range for literal's primitive type BF16 namely [-3.38953e+38, 3.38953e+38]."},
		{"f8e4m3fn[]", "500", 0, "namely [-448, 448]."},
		{"f8e8m0fnu[]", "0", 0, "value 0 is out of range for literal's primitive type F8E8M0FNU namely [5.87747e-39, 1.70141e+38]."},
		{"f64[]", "1e400", 0, "Constant is out of range for double (+/-1.79769e+308) and so is unparsable."},
		{"c64[]", "(1, 1e39)", 0, "imaginary part 1e+39 is out of range for literal's primitive type C64, namely [-3.40282e+38, 3.40282e+38]."},
		{"bf16[1]", "{nan(0x3ff)}", 1, "tries to set NaN payload 0x3ff to a literal in shape bf16[1] at linear index 0, but the NaN payload is out of range (0x7f)"},
		{"f8e4m3fn[2]", "{1, nan(0x1)}", 4, "tries to set NaN payload 0x1 to a literal in shape f8e4m3fn[2] at linear index 1, but f8e4m3fn does not support payloads"},
		{"f32[]", "nan(0x0)", 3, "NaN payload 0x0 is out of range"},
		{"f32[2,3]", "{1, 2, 3, 4, 5, 6}", 1, "expects nested array in rank 2, but sees 1"},
		{"f32[2]", "{1,{2}}", 3, "expects nested array in rank 1, but sees larger"},
		{"f32[2,3,2]", "{{{1, 2}, {3, 4}, {5, 6}, {7, 8}}}", 26, "expects 3 elements in the [0]th element, but sees more"},
		{"f32[2,2]", "{{1, 2}, {3}}", 11, "expects 2 elements in the [1]th element, but sees 1"},
		{"f32[2]", "{1, 2, 3}", 7, "expects 2 elements on the minor-most dimension, but sees more"},
		{"f32[2]", "}{1, 2}", 0, "unexpected '}' token"},
		{"f32[2]", "{1, 2", 5, "expects '}'"},
		{"f32[]", "", 0, "expects a value"},
		{"f32[]", "1 2", 2, "expects the end of the literal"},
		{"f32[]", "(1, 2)", 0, "unexpected '(' in literal. Parens are only valid for complex literals"},
		{"s32[]", "1.5", 0, "expects integer for primitive type: S32"},
		{"pred[]", "0.0", 0, "expects integer for primitive type: PRED"},
		{"f32[]", "true", 0, "expect floating point value for primitive type: F32"},
		{"f32[]", "foo", 0, "unexpected token type in a literal"},
		{"f32[1]", "{1 /* open", 3, "unterminated comment"},
		{"(f32[], f32[])", "(1 2)", 3, "expects ',' to separate tuple elements"},
		{"(f32[])", "(1, 2)", 2, "expects ')' at the end of the tuple with 1 elements"},
		{"f32[?]", "{1}", 0, "unbounded"},
		{"f32[1000000000000]", "{1}", 2, "expects 1000000000000 elements in the []th element, but sees 1"},
		{"f32[4294967296,4294967296]", "{{1}}", 3, "expects 4294967296 elements in the [0]th element, but sees 1"},
		{"f32[3]", "{1, ...}", 4, "`...`"},
	}
	for _, c := range cases {
		_, err := ParseLiteral(testShape(t, c.shape), c.text)
		le, ok := err.(*LiteralError)
		switch {
		case err == nil:
			t.Errorf("%s %q: accepted", c.shape, c.text)
		case !ok:
			t.Errorf("%s %q: %v is not a *LiteralError", c.shape, c.text, err)
		case !strings.Contains(le.Msg, c.msg) || le.Offset != c.offset:
			t.Errorf("%s %q: error at %d %q, want at %d %q", c.shape, c.text, le.Offset, le.Msg, c.offset, c.msg)
		}
	}
}

func TestParseLiteralPrefix(t *testing.T) {
	text := "{1, 2} /* c */ ), metadata={}"
	l, end, err := ParseLiteralPrefix(testShape(t, "s32[2]"), text)
	if err != nil || end != strings.Index(text, ")") || l.GetInt64(1) != 2 {
		t.Errorf("got end %d, err %v", end, err)
	}
}

// FuzzParseLiteral checks that no text makes ParseLiteral panic, and that
// whatever it accepts prints to a fixed point.
func FuzzParseLiteral(f *testing.F) {
	shapes := []Shape{ScalarShape(F32), ArrayShape(S8, 2, 2), ArrayShape(BF16, 3), ScalarShape(C64),
		TupleShape(ArrayShape(Pred, 2), ScalarShape(U64)), ArrayShape(F8E4M3FN, 1, 1, 1, 2), ScalarShape(F4E2M1FN)}
	for _, seed := range []string{"1", "{ {1, 2}, {3, 4} }", "{nan(0x7f), -inf, 1e5}", "(1, -nan(0x3))",
		"( {1, 0}, 18446744073709551615 )", "{ { /*i0=0*/ { /*i1=0*/ {1, 2} } } }", "{...}", "-0"} {
		for i := range shapes {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		s := shapes[int(which)%len(shapes)]
		l, err := ParseLiteral(s, text)
		if err != nil {
			if le, ok := err.(*LiteralError); !ok || le.Offset < 0 || le.Offset > len(text) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		p := payload(l)
		l2, err := ParseLiteral(s, p)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, p, err)
		}
		if p2 := payload(l2); p2 != p {
			t.Fatalf("%q printed as %q, then %q", text, p, p2)
		}
		_ = l.String()
	})
}
