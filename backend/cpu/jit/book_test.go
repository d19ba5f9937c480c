//go:build linux && amd64 && !purego

package jit

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// isolateBook empties the process-wide book for a test and leaves it
// empty after, recording off and the generator installed.
func isolateBook(t *testing.T) {
	t.Helper()
	if !Available {
		t.Skip("no code generation here")
	}
	ClearBook()
	Record(false)
	t.Cleanup(func() {
		Record(false)
		ClearBook()
		InstallGenerator()
	})
}

// bookPrograms are programs of every kind the generator takes: math
// with shortcuts (wide where the machine has AVX-512), row programs with
// row scalars and folds, bf16 and f16 arrays, strided and prefetching
// ones, and random ones (FuzzPrograms').
func bookPrograms() map[string]*Program {
	c := func(v float32) Value { return Value{Op: Const, Value: v} }
	progs := map[string]*Program{
		"exp": {Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp, Args: [3]int{0}}}},
		"chain10": {Inputs: 1, Values: []Value{{Op: Input}, c(0.5), {Op: Mul, Args: [3]int{0, 1}},
			{Op: Add, Args: [3]int{2, 0}}, {Op: Tanh, Args: [3]int{3}}, {Op: Mul, Args: [3]int{4, 4}},
			{Op: Sub, Args: [3]int{5, 1}}, {Op: Exp, Args: [3]int{6}}, {Op: Mul, Args: [3]int{7, 4}},
			{Op: Abs, Args: [3]int{8}}, {Op: Sqrt, Args: [3]int{9}}, {Op: Sub, Args: [3]int{10, 2}}},
			PrefetchInputs: []int{0}, PrefetchAhead: 512},
		"softmax rows": {Inputs: 2, Scalars: 1, RowLen: 200, RowScalars: []int{0}, Values: []Value{{Op: Input},
			{Op: Splat, Arg: 0}, {Op: Sub, Args: [3]int{0, 1}}, {Op: Exp, Args: [3]int{2}}, {Op: Input, Arg: 1},
			{Op: Div, Args: [3]int{3, 4}}}, Outputs: []int{3, 5}, CachedOutputs: []int{1},
			RowFolds: []RowFold{{Op: Add, Value: 3}, {Op: Max, Value: 4}}},
		"bf16": {Inputs: 2, Values: []Value{{Op: Input}, {Op: Input, Arg: 1}, {Op: Tanh, Args: [3]int{0}},
			{Op: Add, Args: [3]int{2, 1}}, {Op: RoundBF16, Args: [3]int{3}}},
			Outputs: []int{3, 4}, InputTypes: []Type{F32, BF16}, OutputTypes: []Type{F32, BF16}},
		"f16": {Inputs: 2, Values: []Value{{Op: Input}, {Op: Input, Arg: 1}, {Op: Tanh, Args: [3]int{0}},
			{Op: Add, Args: [3]int{2, 1}}, {Op: RoundF16, Args: [3]int{3}}},
			Outputs: []int{3, 4}, InputTypes: []Type{F32, F16}, OutputTypes: []Type{F32, F16}},
		"bias-relu strided": {Inputs: 2, Scalars: 1, Strided: true, Values: []Value{
			{Op: Input}, {Op: Input, Arg: 1}, {Op: Add, Args: [3]int{0, 1}}, c(0),
			{Op: Max, Args: [3]int{2, 3}}, {Op: Splat}, {Op: Mul, Args: [3]int{4, 5}}}},
	}
	rng := rand.New(rand.NewPCG(71, 72))
	for i := range 12 {
		progs[fmt.Sprintf("random %d", i)] = randomProgram(rng)
	}
	return progs
}

// compiled is a Func's code and what it computes.
type compiled struct {
	f    *Func
	outs []Array
	fold [][]float32
}

// compileAndRun compiles p and runs it on arguments made from seed, with
// streaming stores or not; a program the generator refuses gives nil.
func compileAndRun(t *testing.T, name string, p *Program, seed uint64, stream bool) *compiled {
	t.Helper()
	f, err := Compile(p)
	if errors.Is(err, errSpill) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	rows, cols := 1+rng.IntN(4), 1+rng.IntN(300)
	if p.RowLen > 0 {
		cols = p.RowLen
	}
	n := rows * cols
	ins, scalars := randomArguments(rng, p, n)
	c := &compiled{f: f, outs: make([]Array, len(p.outputs()))}
	for k := range c.outs {
		c.outs[k] = newArray(p.outputType(k), n)
	}
	switch {
	case p.Strided:
		strides := make([]int, max(len(c.outs), len(ins)))
		for k := range strides {
			strides[k] = cols
		}
		r := f.Runner(scalars)
		r.RunStrided(c.outs, ins, rows, cols, strides[:len(c.outs)], strides[:len(ins)])
		r.Close()
	case p.RowLen > 0:
		var rowVals [][]float32
		for range p.RowScalars {
			rowVals = append(rowVals, testInput(rng, rows, 3))
		}
		for range p.RowFolds {
			c.fold = append(c.fold, make([]float32, rows*f.FoldWidth()))
		}
		f.RunRowsFold(c.outs, ins, scalars, rowVals, c.fold, stream)
	default:
		f.Run(c.outs, ins, scalars, stream)
	}
	return c
}

// sameRun checks that two runs computed the same bits, from the same
// code.
func sameRun(t *testing.T, what string, got, want *compiled) {
	t.Helper()
	if !bytes.Equal(got.f.code, want.f.code) || !slices.Equal(got.f.pool, want.f.pool) || got.f.foldWidth != want.f.foldWidth {
		t.Fatalf("%s: other code, pool or fold width than the generator's", what)
	}
	if got.f.codeNT != nil && (!bytes.Equal(got.f.codeNT, want.f.codeNT) || !slices.Equal(got.f.poolNT, want.f.poolNT)) {
		t.Fatalf("%s: another streaming loop than the generator's", what)
	}
	for k := range want.outs {
		for i := range want.outs[k].Len() {
			if g, w := arrayBits(got.outs[k], i), arrayBits(want.outs[k], i); g != w {
				t.Fatalf("%s: output %d, element %d: %#x, want %#x", what, k, i, g, w)
			}
		}
	}
	for j := range want.fold {
		sameBits(t, what+": folds", got.fold[j], want.fold[j])
	}
}

// TestBookRunsRecordedCode records the code of a set of programs (each
// with its streaming loop, and FoldCode's programs), marshals the book,
// and with the book emptied and the generator removed loads it and
// compiles the programs again: each finds its code in the book (hits,
// no misses), the same bytes, and computes the same bits, streaming or
// not.
func TestBookRunsRecordedCode(t *testing.T) { bothWidths(t, testBookRunsRecordedCode) }

func testBookRunsRecordedCode(t *testing.T) {
	isolateBook(t)
	progs := bookPrograms()
	Record(true)
	want := map[string][2]*compiled{}
	for name, p := range progs {
		for i, stream := range []bool{false, true} {
			c := compileAndRun(t, name, p, uint64(len(name)), stream)
			if c == nil {
				delete(progs, name)
				break
			}
			w := want[name]
			w[i] = c
			want[name] = w
		}
		if fp := progs[name]; fp != nil && len(fp.RowFolds) > 0 {
			if _, err := want[name][0].f.FoldCode(0); err != nil {
				t.Fatalf("%s: FoldCode: %v", name, err)
			}
		}
	}
	Record(false)
	book := Recorded()
	if again := Recorded(); again.Len() != 0 {
		t.Fatalf("Recorded took %d entries, then %d more", book.Len(), again.Len())
	}
	data := book.Marshal()
	ClearBook()
	RemoveGenerator()
	if err := LoadBook(data); err != nil {
		t.Fatal(err)
	}
	hits, misses := BookHits(), BookMisses()
	compiles := 0
	for name, p := range progs {
		for i, stream := range []bool{false, true} {
			sameRun(t, fmt.Sprintf("%s, stream %v", name, stream), compileAndRun(t, name, p, uint64(len(name)), stream), want[name][i])
			compiles++
		}
		if len(p.RowFolds) > 0 {
			if _, err := want[name][0].f.FoldCode(0); err != nil {
				t.Fatalf("%s: FoldCode from the book: %v", name, err)
			}
		}
	}
	if BookMisses() != misses || BookHits()-hits < int64(compiles) {
		t.Fatalf("%d compiles: %d hits and %d misses in the book", compiles, BookHits()-hits, BookMisses()-misses)
	}
}

// With no generator, a program the book lacks is refused with an error
// that wraps ErrUnsupported (the caller keeps its tile program); one
// whose streaming loop the book lacks runs with ordinary stores, and
// FoldCode's program missing is an error too.
func TestBookWithoutGenerator(t *testing.T) {
	isolateBook(t)
	RemoveGenerator()
	progs := bookPrograms()
	for name, p := range progs {
		if _, err := Compile(p); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	// A book of the plain loops only.
	InstallGenerator()
	p := progs["softmax rows"]
	want := compileAndRun(t, "softmax rows", p, 3, true)
	b := &Book{abi: codeABI(), entries: map[string]entry{}}
	key := programKey(p, false, targetOf(p))
	b.entries[key] = entry{code: bytes.Clone(want.f.code), pool: want.f.pool, width: want.f.foldWidth, features: featuresFor(want.f.wide)}
	ClearBook()
	RemoveGenerator()
	if err := LoadBook(b.Marshal()); err != nil {
		t.Fatal(err)
	}
	got := compileAndRun(t, "softmax rows", p, 3, true)
	sameRun(t, "no streaming loop in the book", got, want)
	if streamed(got.f) {
		t.Fatal("a streaming loop from nowhere")
	}
	if _, err := got.f.FoldCode(0); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("FoldCode: %v, want ErrUnsupported", err)
	}
}

// Entries needing a feature this machine lacks are skipped; a book made
// for other generated code is refused.
func TestBookSkipsWhatCannotRun(t *testing.T) {
	isolateBook(t)
	p := bookPrograms()["exp"]
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	e := entry{code: bytes.Clone(f.code), pool: f.pool, width: f.foldWidth, features: featuresFor(f.wide) + ",avx10000"}
	b := &Book{abi: codeABI(), entries: map[string]entry{programKey(p, false, targetOf(p)): e}}
	RemoveGenerator()
	if err := LoadBook(b.Marshal()); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(p); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("code needing a feature the machine lacks: %v, want ErrUnsupported", err)
	}
	b.abi++
	if err := LoadBook(b.Marshal()); err == nil {
		t.Fatal("a book of other generated code loads")
	}
}

// Many goroutines compile at once, while recording and from the book
// (run with -race).
func TestBookConcurrentCompiles(t *testing.T) {
	isolateBook(t)
	progs := bookPrograms()
	run := func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for name, p := range progs {
					if _, err := Compile(p); err != nil && !errors.Is(err, errSpill) {
						t.Errorf("%s: %v", name, err)
					}
				}
			})
		}
		wg.Wait()
	}
	Record(true)
	run()
	Record(false)
	data := Recorded().Marshal()
	ClearBook()
	RemoveGenerator()
	if err := LoadBook(data); err != nil {
		t.Fatal(err)
	}
	misses := BookMisses()
	run()
	if BookMisses() != misses {
		t.Fatalf("%d misses", BookMisses()-misses)
	}
}

// settings are the package variables the generator's target comes
// from, each way they can be set.
type settings struct {
	wideCode, wideAlways, shortcuts bool
	maxPinned                       int
}

func (s settings) set() {
	wideCode, wideAlways, shortcuts, maxPinned = s.wideCode, s.wideAlways, s.shortcuts, s.maxPinned
}

func allSettings() []settings {
	var all []settings
	for i := range 16 {
		all = append(all, settings{wideCode: i&1 != 0, wideAlways: i&2 != 0, shortcuts: i&4 != 0, maxPinned: 16 - 14*(i>>3)})
	}
	return all
}

// keyPrograms are bookPrograms, more random ones, variants of them
// (strided, prefetching, with cached outputs, as FoldCode makes), and
// copies with empty lists where the originals have nil ones.
func keyPrograms() []*Program {
	var progs []*Program
	for _, p := range bookPrograms() {
		progs = append(progs, p)
	}
	rng := rand.New(rand.NewPCG(81, 82))
	for range 20 {
		p := randomProgram(rng)
		q := *p
		switch {
		case p.RowLen > 0:
			q.CachedOutputs = []int{0}
		case p.allF32():
			q.Strided = true
		default:
			q.PrefetchInputs, q.PrefetchAhead = []int{0}, 128*(1+rng.IntN(4))
		}
		e := *p
		e.RowScalars, e.RowFolds, e.CachedOutputs, e.PrefetchInputs = []int{}, []RowFold{}, []int{}, []int{}
		progs = append(progs, p, &q, &e)
	}
	for _, lanes := range []int{8, 16} {
		for unroll := 1; unroll <= maxUnroll; unroll++ {
			progs = append(progs, &Program{Inputs: 1, Values: []Value{{Op: Input}}, Outputs: []int{0}, RowLen: 40,
				RowFolds: []RowFold{{Op: Max, Value: 0}}, lanes: lanes, unroll: unroll})
		}
	}
	return progs
}

// TestEqualKeysEqualCode generates code for a varied set of programs
// under every setting the generator's target comes from (on a machine
// without AVX-512 too: the wide code is only generated, not run), with
// streaming stores and without, and checks that whatever shares a key
// shares its code, pool and fold width: no two programs' different code
// could be taken one for the other from the book. Many settings give
// one target (every setting of wideAlways without wideCode, say), so
// keys do repeat.
func TestEqualKeysEqualCode(t *testing.T) {
	type made struct {
		code  []byte
		pool  []uint32
		width int
	}
	defer settings{wideCode: wideCode, wideAlways: wideAlways, shortcuts: shortcuts, maxPinned: maxPinned}.set()
	seen := map[string]made{}
	generated := 0
	for i, p := range keyPrograms() {
		for _, s := range allSettings() {
			s.set()
			tg := targetOf(p)
			for _, nt := range []bool{false, true} {
				code, pool, width, err := generate(p, nt, tg)
				if err != nil {
					continue
				}
				generated++
				key, m := programKey(p, nt, tg), made{code, pool, width}
				if was, ok := seen[key]; ok && (!bytes.Equal(was.code, code) || !slices.Equal(was.pool, pool) || was.width != width) {
					t.Fatalf("program %d (%+v), settings %+v, nt %v: other code than before for its key", i, p, s, nt)
				}
				seen[key] = m
			}
		}
	}
	if len(seen) == 0 || generated < 2*len(seen) {
		t.Fatalf("%d programs generated, %d keys: too few repeats to test", generated, len(seen))
	}
}

// A program compiled again takes the code generated the first time (one
// entry in made for both), and that code computes what fresh code does.
func TestGeneratedOnce(t *testing.T) {
	if !Available {
		t.Skip("no code generation here")
	}
	c := rand.Float32() + 2 // a program no other test compiles
	p := func() *Program {
		return &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Const, Value: c}, {Op: Mul, Args: [3]int{0, 1}}, {Op: Tanh, Args: [3]int{2}}}}
	}
	count := func() int {
		made.mu.Lock()
		defer made.mu.Unlock()
		return len(made.entries)
	}
	before := count()
	f1, err := Compile(p())
	if err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before+1 {
		t.Fatalf("made holds %d entries after a new program, want %d", got, before+1)
	}
	f2, err := Compile(p())
	if err != nil {
		t.Fatal(err)
	}
	if got := count(); got != before+1 {
		t.Fatalf("made holds %d entries after the same program again, want %d", got, before+1)
	}
	in := make([]float32, 100)
	for i := range in {
		in[i] = float32(i)/50 - 1
	}
	o1, o2 := make([]float32, len(in)), make([]float32, len(in))
	f1.RunF32([][]float32{o1}, [][]float32{in}, nil)
	f2.RunF32([][]float32{o2}, [][]float32{in}, nil)
	if !slices.Equal(o1, o2) || o1[99] == 0 {
		t.Fatalf("the code taken again computes %v, fresh code %v", o2[95:], o1[95:])
	}
}

// An f16 program's entry says its code needs F16C, and other programs'
// entries do not; where the machine lacks F16C, LoadBook skips it.
func TestBookF16Features(t *testing.T) {
	isolateBook(t)
	progs := bookPrograms()
	Record(true)
	for _, name := range []string{"f16", "bf16", "exp"} {
		if _, err := Compile(progs[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	Record(false)
	b := Recorded()
	for _, name := range []string{"f16", "bf16", "exp"} {
		p := progs[name]
		e, ok := b.entries[programKey(p, false, targetOf(p))]
		if !ok {
			t.Fatalf("%s: not recorded", name)
		}
		if has := slices.Contains(strings.Split(e.features, ","), "f16c"); has != (name == "f16") {
			t.Errorf("%s: features %q", name, e.features)
		}
	}
	if !slices.Contains(b.Features(), "f16c") {
		t.Errorf("the book's features %v lack f16c", b.Features())
	}
	ClearBook()
	RemoveGenerator()
	was := hasF16C
	hasF16C = false
	err := LoadBook(b.Marshal())
	hasF16C = was
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(progs["f16"]); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("an f16 program from a book loaded without F16C: %v, want ErrUnsupported", err)
	}
	if _, err := Compile(progs["bf16"]); err != nil {
		t.Fatalf("a bf16 program from the same book: %v", err)
	}
}
