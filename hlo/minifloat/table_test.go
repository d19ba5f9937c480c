package minifloat

import (
	"math"
	"testing"
)

// The table agrees with ToFloat64 bit for bit (NaN payloads included) on
// every pattern of every format.
func TestValuesTable(t *testing.T) {
	for _, f := range All {
		tab := f.Values()
		if len(tab) != 1<<f.Bits() {
			t.Fatalf("%s: %d entries", f.Name(), len(tab))
		}
		for b, v := range tab {
			if w := f.ToFloat64(uint16(b)); math.Float64bits(v) != math.Float64bits(w) {
				t.Fatalf("%s pattern %#x: table %v, ToFloat64 %v", f.Name(), b, v, w)
			}
		}
	}
}
