// Command pairs times Axle and ONNX Runtime on ONNX test folders in short
// alternating bursts, both sessions kept open, and reports the median of
// the bursts' ratios.
//
//	go run ./bench/onnx/pairs --ort-module /tmp/ort/node_modules/onnxruntime-node DIR...
//
// Every folder under DIR holding model.onnx is timed on the inputs of its
// test_data_set_0. A session of each engine stays open (ONNX Runtime's in
// ort_worker.js, a node process, as ../../../../shared/bench/onnx/ort_run.js
// opens it; Axle's in this process, as `axle run` opens it), each is warmed
// up, and then each burst runs one engine --runs times and the other
// --runs times, the order swapped every burst, the other engine idle
// meanwhile: each burst follows a pause (--gap) longer than ONNX Runtime's
// thread pool spins after its last run. Its workers poll for about 50 ms
// after a burst (a BiLSTM's session: a vCPU's worth of CPU time for the
// first 50 ms, nothing after); with the 10 ms pause used before, an Axle
// burst began with one of the two vCPUs taken, and two-thread ratios of
// short models came out 1.1–1.4 where bursts 100 ms apart, and Axle alone,
// gave 0.8–0.9. A burst's figure is the median of its runs; a pair's ratio is
// Axle's over ONNX Runtime's. On these shared hosts the speed of the whole
// machine drifts over seconds (a model's median moves 20-50% from one
// minute to the next, for both engines alike): separate processes a few
// seconds apart (bench/onnx/run.sh) compare different machines, while
// bursts a fraction of a second apart see the same one, so the median of
// the pairs' ratios holds where the ratio of two medians does not. It
// prints one line per model: both engines' median burst, the median ratio
// and the ratios' quartiles.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/graph"
)

func main() {
	ortModule := flag.String("ort-module", "/tmp/ort/node_modules/onnxruntime-node", "path of the onnxruntime-node package")
	threads := flag.Int("threads", 2, "threads of both engines")
	bursts := flag.Int("bursts", 20, "bursts of each engine")
	runs := flag.Int("runs", 10, "runs a burst")
	warmup := flag.Int("warmup", 5, "untimed runs of each engine first")
	settle := flag.Int("settle", 2, "untimed runs at the start of each burst")
	gap := flag.Duration("gap", 100*time.Millisecond, "pause before each burst (longer than ONNX Runtime's post-run spin)")
	flag.Parse()
	worker, err := filepath.Abs(filepath.Join(filepath.Dir(sourceFile()), "ort_worker.js"))
	if err != nil || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: pairs [--threads T] [--bursts B] [--runs R] DIR...")
		os.Exit(2)
	}
	for _, root := range flag.Args() {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "model.onnx" {
				dirs = append(dirs, filepath.Dir(p))
			}
			return nil
		})
		sort.Strings(dirs)
		for _, dir := range dirs {
			if err := pair(dir, worker, *ortModule, *threads, *bursts, *runs, *warmup, *settle, *gap); err != nil {
				fmt.Printf("%s: %v\n", filepath.Base(dir), err)
			}
		}
	}
}

// sourceFile is this file's directory's main.go, where ort_worker.js lies
// beside it (go run builds in a temporary directory).
func sourceFile() string {
	if wd, err := os.Getwd(); err == nil {
		for _, p := range []string{"bench/onnx/pairs/main.go", "main.go"} {
			if _, err := os.Stat(filepath.Join(wd, p)); err == nil {
				return filepath.Join(wd, p)
			}
		}
	}
	return "main.go"
}

func pair(dir, worker, ortModule string, threads, bursts, runs, warmup, settle int, gap time.Duration) error {
	sess, err := graph.Open(filepath.Join(dir, "model.onnx"), graph.Options{Backend: "cpu", Threads: threads})
	if err != nil {
		return err
	}
	defer sess.Close()
	tmp, err := os.MkdirTemp("", "pairs")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	inputs, spec, err := readInputs(sess, dir, tmp)
	if err != nil {
		return err
	}
	ort, err := startORT(worker, ortModule, filepath.Join(dir, "model.onnx"), threads, spec)
	if err != nil {
		return err
	}
	defer ort.stop()
	axle := func(n int) ([]float64, error) {
		time.Sleep(gap)
		ms := make([]float64, n)
		for i := -settle; i < n; i++ {
			t := time.Now()
			if _, err := sess.RunOrdered(context.Background(), inputs); err != nil {
				return nil, err
			}
			if i >= 0 {
				ms[i] = float64(time.Since(t).Microseconds()) / 1000
			}
		}
		return ms, nil
	}
	ortRun := func(n int) ([]float64, error) {
		time.Sleep(gap)
		ms, err := ort.run(settle + n)
		if err != nil {
			return nil, err
		}
		return ms[settle:], nil
	}
	if _, err := axle(warmup); err != nil {
		return err
	}
	if _, err := ort.run(warmup); err != nil {
		return err
	}
	var as, os_, ratios []float64
	for b := range bursts {
		var a, o []float64
		if b%2 == 0 {
			if a, err = axle(runs); err == nil {
				o, err = ortRun(runs)
			}
		} else {
			if o, err = ortRun(runs); err == nil {
				a, err = axle(runs)
			}
		}
		if err != nil {
			return err
		}
		ma, mo := median(a), median(o)
		as, os_, ratios = append(as, ma), append(os_, mo), append(ratios, ma/mo)
	}
	slices.Sort(ratios)
	q := func(f float64) float64 { return ratios[int(f*float64(len(ratios)-1)+0.5)] }
	fmt.Printf("%s threads=%d bursts=%d runs=%d axle_ms=%.3f ort_ms=%.3f ratio=%.2f quartiles=%.2f-%.2f\n",
		filepath.Base(dir), threads, bursts, runs, median(as), median(os_), median(ratios), q(0.25), q(0.75))
	return nil
}

// readInputs reads test_data_set_0's inputs in the graph's order and
// writes each as raw bytes for the ONNX Runtime worker, returning the
// values and the worker's input list.
func readInputs(sess *graph.Session, dir, tmp string) ([]*onnx.Value, string, error) {
	type input struct {
		Name string  `json:"name"`
		Type string  `json:"type"`
		Dims []int64 `json:"dims"`
		File string  `json:"file"`
	}
	types := map[hlo.DType]string{hlo.F32: "float32", hlo.F64: "float64", hlo.F16: "float16", hlo.S8: "int8",
		hlo.U8: "uint8", hlo.S16: "int16", hlo.U16: "uint16", hlo.S32: "int32", hlo.U32: "uint32",
		hlo.S64: "int64", hlo.U64: "uint64", hlo.Pred: "bool"}
	var values []*onnx.Value
	var list []input
	for k, vi := range sess.Inputs() {
		v, err := onnx.ReadValueFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", k)), vi.Type)
		if err != nil {
			return nil, "", err
		}
		if v.Kind != onnx.KindTensor || v.Tensor.IsString() {
			return nil, "", fmt.Errorf("input %q is not a numeric tensor", vi.Name)
		}
		l := v.Tensor.Lit
		t, ok := types[l.Shape().DType]
		if !ok {
			return nil, "", fmt.Errorf("input %q: no ONNX Runtime type for %v", vi.Name, l.Shape().DType)
		}
		f := filepath.Join(tmp, fmt.Sprintf("input_%d.bin", k))
		if err := os.WriteFile(f, l.RawBytes(), 0o644); err != nil {
			return nil, "", err
		}
		values = append(values, v)
		dims := slices.Clone(l.Shape().Dims)
		if dims == nil {
			dims = []int64{} // a scalar: [] for the worker, not null
		}
		list = append(list, input{vi.Name, t, dims, f})
	}
	spec := filepath.Join(tmp, "inputs.json")
	b, _ := json.Marshal(list)
	return values, spec, os.WriteFile(spec, b, 0o644)
}

type ortWorker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startORT(worker, module, model string, threads int, spec string) (*ortWorker, error) {
	cmd := exec.Command("node", worker, model, fmt.Sprint(threads), spec)
	cmd.Env = append(os.Environ(), "ORT_NODE_MODULE="+module)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &ortWorker{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	w.out.Buffer(nil, 1<<20)
	if !w.out.Scan() || strings.TrimSpace(w.out.Text()) != "ready" {
		w.stop()
		return nil, fmt.Errorf("ONNX Runtime's worker did not start (%s)", w.out.Text())
	}
	return w, nil
}

func (w *ortWorker) run(n int) ([]float64, error) {
	if _, err := fmt.Fprintln(w.in, n); err != nil {
		return nil, err
	}
	if !w.out.Scan() {
		return nil, fmt.Errorf("ONNX Runtime's worker stopped")
	}
	var ms []float64
	return ms, json.Unmarshal(w.out.Bytes(), &ms)
}

func (w *ortWorker) stop() {
	w.in.Close()
	_ = w.cmd.Wait()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
