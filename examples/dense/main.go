// Command dense trains the XLA tutorial's dense classifier on
// Fashion-MNIST with Axle: one 784→10 layer, softmax cross-entropy, Adam
// at 1e-3, batches of 100, 1000 steps, the raw 0..255 pixels as inputs
// (the tutorial does not scale them). The training step — forward pass,
// gradient and Adam update — is one module built with xb and compiled by
// the CPU backend; the weights and Adam's state stay in device buffers,
// donated and replaced each step. The weights start Glorot-uniform and the
// bias at zero, as Keras' Dense layer does.
//
// Usage:
//
//	go -C examples run ./dense [--steps N | --epochs N] [--data DIR] [--plot dense.png]
//
// The last line of output is
// test_accuracy=<x> steps=<n> train_seconds=<s> ms_per_step=<ms>, where
// train_seconds counts the training steps only.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/examples/internal/curves"
	"github.com/axle-ml/axle/examples/internal/fashion"
	"github.com/axle-ml/axle/examples/internal/progress"
	"github.com/axle-ml/axle/examples/internal/recipe"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/optim"
	"github.com/axle-ml/axle/xb"
)

const (
	batch    = 100
	pixels   = fashion.Side * fashion.Side
	classes  = 10
	evalSize = 1000
	every    = 100 // steps between reports
)

func main() {
	f := recipe.Register("dense.png")
	lr := flag.Float64("lr", 1e-3, "Adam's learning rate")
	flag.Parse()
	data, err := fashion.Load(f.Data)
	if err == nil {
		_, err = run(f, *lr, data)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dense:", err)
		os.Exit(1)
	}
}

// summary is what a run reports back to its test.
type summary struct {
	firstLoss, lastLoss float32
	accuracy            float64
}

// logits is the model: x·W + b.
func logits(x *xb.Op, params []*xb.Op) *xb.Op { return xb.Linear(x, params[0], params[1]) }

func run(f *recipe.Flags, lr float64, data *fashion.Dataset) (*summary, error) {
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(f.Seed, 1))
	params := []*hlo.Literal{recipe.Glorot(rng, pixels, classes, pixels, classes), recipe.Zeros(classes)}
	loss := func(b *xb.Builder, p, in []*xb.Op, key *xb.Op) (*xb.Op, *xb.Op) {
		return xb.SparseCrossEntropy(logits(xb.Convert(in[0], hlo.F32), p), in[1]), key
	}
	tr, err := optim.NewTrainer(c, optim.Adam{LR: lr}, params,
		[]hlo.Shape{hlo.ArrayShape(hlo.U8, batch, pixels), hlo.ArrayShape(hlo.S32, batch)}, loss, f.Seed, f.CompileOptions())
	if err != nil {
		return nil, err
	}
	forward, err := compileForward(c)
	if err != nil {
		return nil, err
	}
	batches := recipe.NewBatcher(&data.Train, batch, f.Seed)
	total := f.TotalSteps(batches.PerEpoch(), 1000, 0)
	fmt.Printf("dense: 784->10, Adam lr %g, batch %d, %d steps on %d training images\n", lr, batch, total, data.Train.N)

	x := make([]uint8, batch*pixels)
	labels := make([]int32, batch)
	stop, err := f.StartProfile()
	if err != nil {
		return nil, err
	}
	bar := progress.New(os.Stderr, "train", total)
	var train time.Duration
	var lossX, lossY, accX, accY []float64
	sum := 0.0
	var res summary
	for step := 1; step <= total; step++ {
		// The raw pixel bytes: the step converts them to 0..255 floats, as
		// the tutorial's compiled step casts its uint8 images.
		batches.NextBytes(x, labels)
		start := time.Now()
		xbuf, err := axle.BufferFromSlice(c, x, batch, pixels)
		if err != nil {
			return nil, err
		}
		lbuf, err := axle.BufferFromSlice(c, labels, batch)
		if err != nil {
			return nil, err
		}
		l, err := tr.Step(xbuf, lbuf)
		train += time.Since(start)
		xbuf.Release()
		lbuf.Release()
		if err != nil {
			return nil, err
		}
		sum += float64(l)
		if step == 1 {
			res.firstLoss = l
		}
		res.lastLoss = l
		bar.Update(step, l)
		if step%every == 0 || step == total {
			n := (step-1)%every + 1
			acc, err := recipe.Accuracy(c, forward, &data.Test, evalSize, []int64{evalSize, pixels}, 1, tr.ParamBuffers())
			if err != nil {
				return nil, err
			}
			bar.Clear()
			fmt.Printf("step %4d: loss %.4f (mean of %d steps)  test accuracy %.4f\n", step, sum/float64(n), n, acc)
			lossX, lossY = append(lossX, float64(step)), append(lossY, sum/float64(n))
			accX, accY = append(accX, float64(step)), append(accY, acc)
			sum = 0
		}
	}
	bar.Done()
	stop()
	f.PrintProfile(tr.Executable())
	acc := accY[len(accY)-1]
	if f.Plot != "" {
		err := curves.WritePNG(f.Plot, "dense 784-10, Adam", []curves.Series{{Name: "train loss (mean per 100 steps)", X: lossX, Y: lossY}},
			[]curves.Series{{Name: "test accuracy", X: accX, Y: accY}})
		if err != nil {
			return nil, err
		}
		fmt.Println("curves written to", f.Plot)
	}
	recipe.Result(acc, total, train)
	res.accuracy = acc
	return &res, nil
}

// compileForward compiles the evaluation model: logits of evalSize images.
func compileForward(c *axle.Client) (*axle.Executable, error) {
	b := xb.New("dense_forward")
	x := b.Param("x", hlo.F32, evalSize, pixels)
	w := b.Param("w", hlo.F32, pixels, classes)
	bias := b.Param("b", hlo.F32, classes)
	m, err := b.Build(logits(x, []*xb.Op{w, bias}))
	if err != nil {
		return nil, err
	}
	return c.Compile(m, axle.CompileOptions{})
}
