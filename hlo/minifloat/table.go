package minifloat

import "sync"

// Decoding by table: every format has at most 2^16 patterns, so the value
// of each can be computed once (512 KiB for the 16-bit formats, 2 KiB for
// the 8-bit ones) and widening an array becomes one load per element. The
// evaluator widens every f16/bf16 operand this way.

// tables maps a format name to its values; reads take no lock.
var tables sync.Map

// Values returns the value of every bit pattern of f, indexed by pattern
// (ToFloat64 of each). The slice is shared: do not modify it.
func (f Format) Values() []float64 {
	if t, ok := tables.Load(f.name); ok {
		return t.([]float64)
	}
	t := make([]float64, 1<<f.Bits())
	for b := range t {
		t[b] = f.ToFloat64(uint16(b))
	}
	actual, _ := tables.LoadOrStore(f.name, t)
	return actual.([]float64)
}
