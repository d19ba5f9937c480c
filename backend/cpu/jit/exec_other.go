//go:build !linux || !amd64 || purego

package jit

// Available says whether generated code runs here: not on this platform
// or build.
const Available = false

// Func is a compiled program; none exist on this platform.
type Func struct{}

// Compile reports ErrUnsupported here (after checking p, so callers'
// mistakes show on every platform).
func Compile(p *Program) (*Func, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}

// WideCode is false here: no code is generated.
func WideCode() bool { return false }

// InstallGenerator does nothing here: no code is generated.
func InstallGenerator() {}

// RemoveGenerator does nothing here.
func RemoveGenerator() {}

// codeABI is 0 here: no book made here holds code (Recorded's are empty),
// and LoadBook adds nothing where no generated code runs.
func codeABI() uint64 { return 0 }

// Run is never called: Compile returns no Func here.
func (f *Func) Run(outs, ins []Array, scalars []float32, stream bool) {}

// RunF32 is never called: Compile returns no Func here.
func (f *Func) RunF32(outs, ins [][]float32, scalars []float32) {}

// RunStridedF32 is never called: Compile returns no Func here.
func (f *Func) RunStridedF32(outs, ins [][]float32, scalars []float32, rows, cols int, outStrides, inStrides []int) {
}

// RunRows is never called: Compile returns no Func here.
func (f *Func) RunRows(outs, ins []Array, scalars []float32, rowVals [][]float32, stream bool) {}

// RunRowsFold is never called: Compile returns no Func here.
func (f *Func) RunRowsFold(outs, ins []Array, scalars []float32, rowVals, folds [][]float32, stream bool) {
}

// FoldWidth is never called.
func (f *Func) FoldWidth() int { return 0 }

// FoldCode is never called.
func (f *Func) FoldCode(k int) (*Func, error) { return nil, ErrUnsupported }

// Runner is never made: Compile returns no Func here.
type Runner struct{}

// Runner is never called: Compile returns no Func here.
func (f *Func) Runner(scalars []float32) Runner { return Runner{} }

// Run is never called.
func (r *Runner) Run(outs, ins []Array) {}

// RunStrided is never called.
func (r *Runner) RunStrided(outs, ins []Array, rows, cols int, outStrides, inStrides []int) {}

// Close is never called.
func (r *Runner) Close() {}
