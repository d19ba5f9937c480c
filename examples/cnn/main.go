// Command cnn trains the TensorFlow auto-clustering tutorial's CNN on
// Fashion-MNIST with Axle: Conv32-Conv32-MaxPool-Dropout-Conv64-Conv64-
// MaxPool-Dropout-Dense512-Dropout-Dense10 with 3x3 kernels and ReLU,
// RMSprop at 1e-4, batches of 256, images scaled by 1/256, 3 epochs. The
// tutorial trains on CIFAR-10; this is the same network on the 28x28x1
// images available here. The whole training step (forward pass with
// dropout, gradients of every weight, RMSprop update) is one module
// compiled by the CPU backend.
//
// Usage:
//
//	go -C examples run ./cnn [--epochs N | --steps N] [--data DIR] [--plot cnn.png]
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
	side     = fashion.Side
	classes  = 10
	evalSize = 500
	scale    = 1.0 / 256
)

func main() {
	f := recipe.Register("cnn.png")
	lr := flag.Float64("lr", 1e-4, "RMSprop's learning rate")
	batch := flag.Int("batch", 256, "examples per training step")
	flag.Parse()
	data, err := fashion.Load(f.Data)
	if err == nil {
		_, err = run(f, *lr, *batch, data)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cnn:", err)
		os.Exit(1)
	}
}

// initParams returns Glorot-uniform kernels and weights (Keras' default;
// a conv kernel's fans are its receptive field times its channels) and
// zero biases, in the order model reads them.
func initParams(seed uint64) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 1))
	conv := func(cin, cout int) []*hlo.Literal {
		return []*hlo.Literal{recipe.Glorot(rng, 9*cin, 9*cout, 3, 3, int64(cin), int64(cout)), recipe.Zeros(int64(cout))}
	}
	dense := func(in, out int) []*hlo.Literal {
		return []*hlo.Literal{recipe.Glorot(rng, in, out, int64(in), int64(out)), recipe.Zeros(int64(out))}
	}
	var p []*hlo.Literal
	p = append(p, conv(1, 32)...)
	p = append(p, conv(32, 32)...)
	p = append(p, conv(32, 64)...)
	p = append(p, conv(64, 64)...)
	p = append(p, dense(5*5*64, 512)...)
	return append(p, dense(512, classes)...)
}

// model returns the logits of x [n, 28, 28, 1]. With key nil it runs
// without dropout (evaluation); otherwise it applies the tutorial's
// dropout and returns the next key.
func model(x *xb.Op, p []*xb.Op, key *xb.Op) (logits, next *xb.Op) {
	conv := func(h, k, b *xb.Op, pad xb.Padding) *xb.Op {
		c := xb.Conv2D(h, k, nil, pad)
		return xb.ReLU(xb.Add(c, xb.BroadcastTo(b, c.Dims()...)))
	}
	dropout := func(h *xb.Op, rate float64) *xb.Op {
		if key == nil {
			return h
		}
		h, key = xb.Dropout(h, rate, key)
		return h
	}
	h := conv(x, p[0], p[1], xb.Same)
	h = conv(h, p[2], p[3], xb.Valid)
	h = dropout(xb.MaxPool(h, []int64{2, 2}, nil, xb.Valid), 0.25)
	h = conv(h, p[4], p[5], xb.Same)
	h = conv(h, p[6], p[7], xb.Valid)
	h = dropout(xb.MaxPool(h, []int64{2, 2}, nil, xb.Valid), 0.25)
	h = xb.Reshape(h, h.Dims()[0], 5*5*64)
	h = dropout(xb.ReLU(xb.Linear(h, p[8], p[9])), 0.5)
	return xb.Linear(h, p[10], p[11]), key
}

// summary is what a run reports back to its test.
type summary struct {
	firstLoss, lastLoss float32
	accuracy            float64
}

func run(f *recipe.Flags, lr float64, batch int, data *fashion.Dataset) (*summary, error) {
	c, err := axle.NewClient(axle.ClientOptions{Backend: "cpu"})
	if err != nil {
		return nil, err
	}
	loss := func(b *xb.Builder, p, in []*xb.Op, key *xb.Op) (*xb.Op, *xb.Op) {
		logits, next := model(in[0], p, key)
		return xb.SparseCrossEntropy(logits, in[1]), next
	}
	start := time.Now()
	tr, err := optim.NewTrainer(c, optim.RMSprop{LR: lr}, initParams(f.Seed),
		[]hlo.Shape{hlo.ArrayShape(hlo.F32, int64(batch), side, side, 1), hlo.ArrayShape(hlo.S32, int64(batch))}, loss, f.Seed, f.CompileOptions())
	if err != nil {
		return nil, err
	}
	forward, err := compileForward(c)
	if err != nil {
		return nil, err
	}
	batches := recipe.NewBatcher(&data.Train, batch, f.Seed)
	total := f.TotalSteps(batches.PerEpoch(), 0, 3)
	fmt.Printf("cnn: RMSprop lr %g, batch %d, %d steps (%d per epoch), compiled in %v\n", lr, batch, total, batches.PerEpoch(), time.Since(start).Round(time.Millisecond))

	stop, err := f.StartProfile()
	if err != nil {
		return nil, err
	}
	x := make([]float32, batch*side*side)
	labels := make([]int32, batch)
	bar := progress.New(os.Stderr, "train", total)
	var train time.Duration
	var lossX, lossY, accX, accY []float64
	sum, n := 0.0, 0
	acc := 0.0
	var res summary
	for step := 1; step <= total; step++ {
		endOfEpoch := batches.Next(x, labels, scale)
		t0 := time.Now()
		xbuf, err := axle.BufferFromSlice(c, x, int64(batch), side, side, 1)
		if err != nil {
			return nil, err
		}
		lbuf, err := axle.BufferFromSlice(c, labels, int64(batch))
		if err != nil {
			return nil, err
		}
		l, err := tr.Step(xbuf, lbuf)
		train += time.Since(t0)
		xbuf.Release()
		lbuf.Release()
		if err != nil {
			return nil, err
		}
		sum, n = sum+float64(l), n+1
		if step == 1 {
			res.firstLoss = l
		}
		res.lastLoss = l
		bar.Update(step, l)
		if endOfEpoch || step == total {
			acc, err = recipe.Accuracy(c, forward, &data.Test, evalSize, []int64{evalSize, side, side, 1}, scale, tr.ParamBuffers())
			if err != nil {
				return nil, err
			}
			bar.Clear()
			fmt.Printf("epoch %.2f (step %d): loss %.4f  test accuracy %.4f  (%.1f ms per step so far)\n",
				float64(step)/float64(batches.PerEpoch()), step, sum/float64(n), acc, train.Seconds()*1000/float64(step))
			lossX, lossY = append(lossX, float64(step)), append(lossY, sum/float64(n))
			accX, accY = append(accX, float64(step)), append(accY, acc)
			sum, n = 0, 0
		}
	}
	bar.Done()
	stop()
	f.PrintProfile(tr.Executable())
	if f.Plot != "" {
		err := curves.WritePNG(f.Plot, "CNN, RMSprop", []curves.Series{{Name: "train loss (mean per epoch)", X: lossX, Y: lossY}},
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

// compileForward compiles the evaluation model (no dropout): logits of
// evalSize images.
func compileForward(c *axle.Client) (*axle.Executable, error) {
	b := xb.New("cnn_forward")
	x := b.Param("x", hlo.F32, evalSize, side, side, 1)
	var params []*xb.Op
	for i, l := range initParams(0) {
		params = append(params, b.Parameter(fmt.Sprintf("p%d", i), l.Shape()))
	}
	logits, _ := model(x, params, nil)
	m, err := b.Build(logits)
	if err != nil {
		return nil, err
	}
	return c.Compile(m, axle.CompileOptions{})
}
