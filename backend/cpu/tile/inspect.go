package tile

import (
	"slices"

	"github.com/axle-ml/axle/backend/cpu/jit"
	"github.com/axle-ml/axle/hlo"
)

// What a compiled program looks like from outside: the backend's tests
// check which code paths a fusion takes through these, and they cost
// nothing when unused.

// SetGeneratedCode turns generated code on or off for the programs
// compiled afterwards (off: tile programs only, for A/B runs and for tests
// comparing the two), returning the previous setting. On where the
// machine has no generated code, it stays off. Not safe while programs
// compile on other goroutines.
func SetGeneratedCode(on bool) (was bool) {
	was, useJIT = useJIT, on && jit.Available
	return was
}

// StridedBlockRuns counts the epilogue blocks run by strided generated
// code since the process started.
func StridedBlockRuns() int64 { return stridedBlocks.Load() }

// Segment describes one generated segment of a program.
type Segment struct {
	// Streams are the parameters whose next tile the code prefetches.
	Streams []int
	// FoldedSums counts the sums the segment folds.
	FoldedSums int
}

// Segments describes the program's generated segments, in order.
func (p *Prog) Segments() []Segment {
	out := make([]Segment, len(p.segs))
	for i, g := range p.segs {
		out[i].Streams = g.streams
		for _, fd := range g.folds {
			if p.slots[fd.slot].op == hlo.OpAdd {
				out[i].FoldedSums++
			}
		}
	}
	return out
}

// Piped reports whether the program's last two segments are pipelined
// across tiles.
func (p *Prog) Piped() bool { return p.pipe != nil }

// TilePrefetches reports whether the tile runner prefetches fusion
// operand param itself (no generated segment streams it).
func (p *Prog) TilePrefetches(param int) bool { return slices.Contains(p.inPlaceParams, param) }

// Body is the program computing the values a reduction folds.
func (p *ReduceProg) Body() *Prog { return p.prod }

// RowRuns counts the loop fusions run row by row with gathers since the
// process started.
func RowRuns() int64 { return rowRuns.Load() }

// SetPipelining turns the pipelining of row programs' last two segments
// on or off for programs compiled afterwards, returning the previous
// setting.
func SetPipelining(on bool) (was bool) {
	was, usePipe = usePipe, on
	return was
}

// GeneratedCode reports whether programs compiled now get generated code.
func GeneratedCode() bool { return useJIT }
