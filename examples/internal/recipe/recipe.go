// Package recipe holds what the training examples share: the flags and
// the result line scripts read, weight initialisation, batching, and
// accuracy over a split.
package recipe

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/examples/internal/fashion"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Flags are the examples' common command-line flags.
type Flags struct {
	Data   string
	Steps  int
	Epochs int
	Plot   string
	Seed   uint64
	// CPUProfile, when set, is a file for a pprof CPU profile of the
	// training loop.
	CPUProfile string
	// Profile prints the training step's per-kernel times at the end.
	Profile bool
}

// Register defines the flags with the example's defaults.
func Register(plot string) *Flags {
	f := &Flags{}
	flag.StringVar(&f.Data, "data", fashion.DefaultDir, "directory of the Fashion-MNIST IDX .gz files (Debian: apt-get install dataset-fashion-mnist)")
	flag.IntVar(&f.Steps, "steps", 0, "stop after this many training steps (0: use --epochs)")
	flag.IntVar(&f.Epochs, "epochs", 0, "passes over the training set (0: the example's default)")
	flag.StringVar(&f.Plot, "plot", plot, "PNG file for the loss and accuracy curves (empty: none)")
	flag.Uint64Var(&f.Seed, "seed", 1, "seed of the initial weights, the batch order and dropout")
	flag.StringVar(&f.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of training to this file")
	flag.BoolVar(&f.Profile, "profile", false, "print the time of each kernel of the training step at the end")
	return f
}

// StartProfile starts the CPU profile if one was asked for; the returned
// function stops it.
func (f *Flags) StartProfile() (stop func(), err error) {
	if f.CPUProfile == "" {
		return func() {}, nil
	}
	out, err := os.Create(f.CPUProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

// CompileOptions are the training step's compile options.
func (f *Flags) CompileOptions() axle.CompileOptions { return axle.CompileOptions{Profile: f.Profile} }

// PrintProfile prints the step's kernel table when --profile was given,
// and writes the step's module to $AXLE_DUMP_STEP when that is set.
func (f *Flags) PrintProfile(step *axle.Executable) {
	if f.Profile {
		fmt.Fprint(os.Stderr, step.ProfileTable(25))
	}
	if path := os.Getenv("AXLE_DUMP_STEP"); path != "" {
		os.WriteFile(path, []byte(hlotext.Print(step.Module(), hlotext.Default)), 0o644)
	}
}

// TotalSteps resolves --steps and --epochs: steps wins; otherwise epochs
// (or defEpochs, or defSteps when that is set) of perEpoch steps each.
func (f *Flags) TotalSteps(perEpoch, defSteps, defEpochs int) int {
	switch {
	case f.Steps > 0:
		return f.Steps
	case f.Epochs > 0:
		return f.Epochs * perEpoch
	case defSteps > 0:
		return defSteps
	}
	return defEpochs * perEpoch
}

// Result prints the line scripts rely on; it must be the last line of
// stdout.
func Result(accuracy float64, steps int, train time.Duration) {
	ms := 0.0
	if steps > 0 {
		ms = train.Seconds() * 1000 / float64(steps)
	}
	fmt.Printf("test_accuracy=%.4f steps=%d train_seconds=%.3f ms_per_step=%.3f\n", accuracy, steps, train.Seconds(), ms)
}

// Glorot returns a Glorot-uniform (Keras' default) initialised f32
// weight of the given dimensions: U(-l, l) with l = √(6/(fanIn+fanOut)).
func Glorot(rng *rand.Rand, fanIn, fanOut int, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.F32, dims...))
	data := l.Data().([]float32)
	limit := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range data {
		data[i] = float32((2*rng.Float64() - 1) * limit)
	}
	return l
}

// Zeros returns a zero f32 array.
func Zeros(dims ...int64) *hlo.Literal { return hlo.NewLiteral(hlo.ArrayShape(hlo.F32, dims...)) }

// Batcher draws batches in a fresh random order each epoch, dropping the
// last partial batch so that every step has the same shape.
type Batcher struct {
	split *fashion.Split
	size  int
	rng   *rand.Rand
	order []int
	at    int
	// Epoch counts completed passes.
	Epoch int
}

// NewBatcher returns batches of size examples of s.
func NewBatcher(s *fashion.Split, size int, seed uint64) *Batcher {
	b := &Batcher{split: s, size: size, rng: rand.New(rand.NewPCG(seed, 7))}
	b.shuffle()
	return b
}

// PerEpoch is the number of full batches in an epoch.
func (b *Batcher) PerEpoch() int { return b.split.N / b.size }

func (b *Batcher) shuffle() {
	b.order = b.rng.Perm(b.split.N)
	b.at = 0
}

// Next fills x with the next batch's pixels times scale and labels with
// its labels, and reports whether the batch ended an epoch.
func (b *Batcher) Next(x []float32, labels []int32, scale float32) (endOfEpoch bool) {
	b.split.Floats(x, b.order[b.at:b.at+b.size], scale)
	return b.advance(labels)
}

// NextBytes is Next for a step that takes the raw pixel bytes (and
// converts them itself, as the tutorial's compiled step does).
func (b *Batcher) NextBytes(x []uint8, labels []int32) (endOfEpoch bool) {
	const n = fashion.Side * fashion.Side
	for k, i := range b.order[b.at : b.at+b.size] {
		copy(x[k*n:(k+1)*n], b.split.Pixels[i*n:(i+1)*n])
	}
	return b.advance(labels)
}

// advance fills the current batch's labels and moves to the next batch.
func (b *Batcher) advance(labels []int32) (endOfEpoch bool) {
	for k, i := range b.order[b.at : b.at+b.size] {
		labels[k] = b.split.Labels[i]
	}
	b.at += b.size
	if b.at+b.size > b.split.N {
		b.Epoch++
		b.shuffle()
		return true
	}
	return false
}

// Accuracy runs forward (logits for batches of batch examples, the images
// passed as one f32 buffer of shape dims, then the weights) over the
// whole split and returns the fraction classified right. The last
// partial batch is padded with the first images and its extra
// predictions ignored.
func Accuracy(c *axle.Client, forward *axle.Executable, s *fashion.Split, batch int, dims []int64, scale float32, weights []*axle.Buffer) (float64, error) {
	x := make([]float32, batch*fashion.Side*fashion.Side)
	right := 0
	for lo := 0; lo < s.N; lo += batch {
		idx := make([]int, batch)
		for k := range idx {
			idx[k] = (lo + k) % s.N
		}
		s.Floats(x, idx, scale)
		xb, err := axle.BufferFromSlice(c, x, dims...)
		if err != nil {
			return 0, err
		}
		outs, err := forward.Execute(append([]*axle.Buffer{xb}, weights...)...)
		xb.Release()
		if err != nil {
			return 0, err
		}
		logits, err := axle.ToSlice[float32](outs[0])
		outs[0].Release()
		if err != nil {
			return 0, err
		}
		classes := len(logits) / batch
		for k := 0; k < batch && lo+k < s.N; k++ {
			if argmax(logits[k*classes:(k+1)*classes]) == int(s.Labels[lo+k]) {
				right++
			}
		}
	}
	return float64(right) / float64(s.N), nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
