package cpu

import (
	"fmt"
	"time"

	"github.com/axle-ml/axle/hlo"
)

// The cost model decides whether a module is worth compiling. Compiling
// costs the optimization pipeline, fusion and lowering once; it pays back
// per execution the difference between the evaluator's cost and the
// compiled code's. When the caller says how many executions to expect
// and that many cannot repay the compilation (a tiny computation run
// once), the executable runs the module on the evaluator instead, as XLA
// does for computations too small to be worth a compiler invocation.
//
// The constants were measured on the reference machine (2-core Zen 3):
// compiling costs ~200 µs plus ~100 µs per instruction (scalar_add 0.6
// ms, graphsage's 51 instructions 12 ms); an execution costs the
// evaluator ~1.6 µs plus ~0.3 µs and ~3 ns per element per instruction
// (ssd_mobilenet: 5.6 s), the compiled code ~0.6 µs plus ~0.1 µs and
// ~0.5 ns per element per instruction (ssd_mobilenet: 0.8 s).
const (
	compileFixed      = 200 * time.Microsecond
	compilePerInstr   = 100 * time.Microsecond
	evalFixed         = 1600 * time.Nanosecond
	evalPerInstr      = 300 * time.Nanosecond
	evalPerElement    = 3.0 // ns
	compiledFixed     = 600 * time.Nanosecond
	compiledPerInstr  = 100 * time.Nanosecond
	compiledPerElemNs = 0.5
)

// Estimate is the cost model's view of one module.
type Estimate struct {
	Compile             time.Duration // to compile it
	Evaluator, Compiled time.Duration // one execution each way
}

// estimate costs m's entry computation (called computations count as
// their callers' elements: good enough to tell tiny from not).
func estimate(m *hlo.Module) Estimate {
	var e Estimate
	var elems float64
	n := 0
	for _, in := range m.Entry.Instructions {
		if in.Opcode == hlo.OpParameter || in.Opcode == hlo.OpConstant {
			continue
		}
		n++
		// An instruction touches its result and its operands (a reduction
		// reads far more than it writes).
		touched := elementCount(in.Shape)
		for _, o := range in.Operands {
			touched += elementCount(o.Shape)
		}
		elems += float64(max(touched, 1))
	}
	e.Compile = compileFixed + time.Duration(n)*compilePerInstr
	e.Evaluator = evalFixed + time.Duration(n)*evalPerInstr + time.Duration(elems*evalPerElement)
	e.Compiled = compiledFixed + time.Duration(n)*compiledPerInstr + time.Duration(elems*compiledPerElemNs)
	return e
}

// interpret reports whether runs executions of m are cheaper on the
// evaluator than compiling it and running the compiled code (runs 0:
// unknown, assumed many).
func (e Estimate) interpret(runs int) bool {
	if runs <= 0 {
		return false
	}
	saved := time.Duration(runs) * (e.Evaluator - e.Compiled)
	return saved < e.Compile
}

func elementCount(s hlo.Shape) int64 {
	if s.IsTuple() {
		var n int64
		for _, t := range s.Tuple {
			n += elementCount(t)
		}
		return n
	}
	if !s.IsArray() {
		return 0
	}
	return max(s.NumElements(), 0)
}

// interpreted is the executable that runs m on the evaluator.
func interpreted(m *hlo.Module, e Estimate) *Executable {
	x := &Executable{module: m, entry: m.Entry, interp: true, Lowering: map[string]int{"evaluator-module": len(m.Entry.Instructions)},
		asg: &assignment{}}
	x.Engine = fmt.Sprintf("evaluator (cost model: compiling ~%s would not pay back over the expected runs at ~%s saved each)",
		e.Compile.Round(time.Microsecond), (e.Evaluator - e.Compiled).Round(time.Nanosecond))
	return x
}
