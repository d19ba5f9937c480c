package minifloat

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The tables in testdata come from gen_tables.py, an exact-rational
// re-implementation of the format definitions (see its doc comment).

func readTable(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var rows [][]string
	sc := bufio.NewScanner(r)
	sc.Scan() // header
	for sc.Scan() {
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func mustFormat(t *testing.T, name string) Format {
	t.Helper()
	f, ok := ByName(name)
	if !ok {
		t.Fatalf("no format %q", name)
	}
	return f
}

func parseHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDecodeTable checks every bit pattern of every format.
func TestDecodeTable(t *testing.T) {
	seen := map[string]int{}
	for _, row := range readTable(t, "decode.tsv") {
		f := mustFormat(t, row[0])
		first := parseHex(t, row[1])
		count, _ := strconv.Atoi(row[2])
		val := row[3]
		seen[row[0]] += count
		for i := range uint64(count) {
			b := uint16(first + i)
			got := f.ToFloat64(b)
			switch val {
			case "nan", "-nan":
				if !math.IsNaN(got) || math.Signbit(got) != (val == "-nan") || !f.IsNaN(b) {
					t.Errorf("%s %#x: got %v (IsNaN %v), want %s", f.Name(), b, got, f.IsNaN(b), val)
				}
				continue
			case "inf", "-inf":
				if !math.IsInf(got, map[bool]int{true: -1, false: 1}[val == "-inf"]) || !f.IsInf(b) {
					t.Errorf("%s %#x: got %v, want %s", f.Name(), b, got, val)
				}
				continue
			}
			neg := strings.HasPrefix(val, "-")
			nk := strings.Split(strings.TrimPrefix(val, "-"), "p")
			n, _ := strconv.ParseInt(nk[0], 10, 64)
			k, _ := strconv.Atoi(nk[1])
			want := math.Ldexp(float64(n+int64(i)), k)
			if neg {
				want = -want
			}
			if math.Float64bits(got) != math.Float64bits(want) || f.IsNaN(b) || f.IsInf(b) {
				t.Errorf("%s %#x: got %v, want %v", f.Name(), b, got, want)
			}
			if float64(f.ToFloat32(b)) != want {
				t.Errorf("%s %#x: ToFloat32 %v, want %v", f.Name(), b, f.ToFloat32(b), want)
			}
		}
	}
	for _, f := range All {
		if seen[f.Name()] != 1<<f.Bits() {
			t.Errorf("%s: table covers %d patterns, want %d", f.Name(), seen[f.Name()], 1<<f.Bits())
		}
	}
}

// TestEncodeTable checks rounding, overflow, zeros and NaN on inputs that
// probe every rounding boundary of the 8- and 4-bit formats and a sample of
// the 16-bit ones.
func TestEncodeTable(t *testing.T) {
	rows := readTable(t, "encode.tsv.gz")
	if len(rows) < 10000 {
		t.Fatalf("only %d encode cases", len(rows))
	}
	bad := 0
	for _, row := range rows {
		f := mustFormat(t, row[0])
		x := math.Float64frombits(parseHex(t, row[1]))
		want := uint16(parseHex(t, row[2]))
		if got := f.FromFloat64(x); got != want {
			if bad++; bad <= 30 {
				t.Errorf("%s.FromFloat64(%v [%s]) = %#x, want %#x", f.Name(), x, row[1], got, want)
			}
		}
	}
}

// TestBF16IsTopHalfOfF32 checks bf16 against its definition: the upper 16
// bits of an IEEE single, so widening is a shift and narrowing a rounding
// of the low 16 bits.
func TestBF16IsTopHalfOfF32(t *testing.T) {
	for b := range 1 << 16 {
		want := math.Float32frombits(uint32(b) << 16)
		got := BF16.ToFloat32(uint16(b))
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("%#x: %v, want %v", b, got, want)
		}
	}
}

// TestKnownValues spot-checks hand-worked values from the format
// definitions (and, for XLA's printed constants, the HLO corpus).
func TestKnownValues(t *testing.T) {
	cases := []struct {
		f    Format
		x    float64
		bits uint16
	}{
		{F16, 65504, 0x7bff},
		{F16, 65520, 0x7c00},  // halfway to 2^16 rounds to even: infinity
		{F16, 65519, 0x7bff},  // below the halfway point
		{BF16, 3.14, 0x4049},  // 3.140625, printed by XLA as 3.141
		{BF16, 9.001, 0x4110}, // 9, printed by XLA as 9
		{F8E4M3FN, 448, 0x7e},
		{F8E4M3FN, 464, 0x7e},     // tie between 448 and 480 (the NaN pattern): even wins
		{F8E4M3FN, 464.001, 0x7f}, // rounds to 480, which is NaN
		{F8E4M3FN, -1000, 0xff},
		{F8E4M3FN, math.Inf(1), 0x7f},
		{F8E5M2, 57344, 0x7b},
		{F8E5M2, 61440, 0x7c}, // tie above the largest value: infinity
		{F8E4M3FNUZ, 240, 0x7f},
		{F8E4M3FNUZ, -1e-10, 0x00}, // no negative zero
		{F8E4M3FNUZ, math.NaN(), 0x80},
		{F8E5M2FNUZ, 57344, 0x7f},
		{F8E4M3B11FNUZ, 30, 0x7f},
		{F8E4M3B11FNUZ, 7, 0x6e}, // 1.75 * 2^2: exponent field 13, mantissa 6
		{F8E3M4, 15.5, 0x6f},
		{F8E3M4, 16, 0x70}, // infinity
		{F8E4M3, 240, 0x77},
		{F8E4M3, 1, 0x38},
		{F8E8M0FNU, 1, 0x7f},
		{F8E8M0FNU, 3, 0x81}, // tie between 2 and 4: the significand 1.5 rounds up
		{F8E8M0FNU, 0, 0xff},
		{F8E8M0FNU, -1, 0xff},
		{F4E2M1FN, 6, 0x7},
		{F4E2M1FN, 100, 0x7}, // saturates
		{F4E2M1FN, -100, 0xf},
		{F4E2M1FN, 0.25, 0x0}, // tie between 0 and 0.5: even
		{F4E2M1FN, 2.5, 0x4},  // tie between 2 and 3: even
	}
	for _, c := range cases {
		if got := c.f.FromFloat64(c.x); got != c.bits {
			t.Errorf("%s.FromFloat64(%v) = %#x, want %#x", c.f.Name(), c.x, got, c.bits)
		}
	}
}

func TestMaxDigits10(t *testing.T) {
	// std::numeric_limits<T>::max_digits10 of the C++ types.
	want := map[string]int{"f16": 5, "bf16": 4, "f8e4m3fn": 3, "f8e5m2": 2, "f8e4m3fnuz": 3,
		"f8e5m2fnuz": 2, "f8e4m3b11fnuz": 3, "f8e3m4": 3, "f8e4m3": 3, "f8e8m0fnu": 2, "f4e2m1fn": 2,
		"f6e2m3fn": 3, "f6e3m2fn": 2}
	for _, f := range All {
		if got := f.MaxDigits10(); got != want[f.Name()] {
			t.Errorf("%s: %d, want %d", f.Name(), got, want[f.Name()])
		}
	}
}

// TestRoundTrip checks that decoding then encoding every non-NaN pattern
// gives it back (a consequence of exactness, not an oracle).
func TestRoundTrip(t *testing.T) {
	for _, f := range All {
		for b := range 1 << f.Bits() {
			if f.IsNaN(uint16(b)) {
				continue
			}
			if got := f.FromFloat64(f.ToFloat64(uint16(b))); got != uint16(b) {
				t.Errorf("%s %#x -> %v -> %#x", f.Name(), b, f.ToFloat64(uint16(b)), got)
			}
		}
	}
}

// The bf16 fast path of FromFloat32 agrees with the general conversion
// on a dense sweep of float32 bit patterns (every 61st, plus every
// pattern around the rounding ties and the overflow threshold).
func TestBF16FromFloat32FastPath(t *testing.T) {
	check := func(b uint32) {
		x := math.Float32frombits(b)
		if got, want := BF16.FromFloat32(x), BF16.FromFloat64(float64(x)); got != want {
			t.Fatalf("FromFloat32(%#08x) = %#04x, want %#04x", b, got, want)
		}
	}
	for b := uint64(0); b < 1<<32; b += 61 {
		check(uint32(b))
	}
	for hi := uint32(0); hi < 1<<16; hi += 7 {
		for _, lo := range []uint32{0x7fff, 0x8000, 0x8001, 0xffff, 0} {
			check(hi<<16 | lo)
		}
	}
	check(0x7f7fffff)
	check(0xff7fffff)
}
