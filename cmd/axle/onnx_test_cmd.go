package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxtest"
)

// cmdONNXTest runs ONNX backend-test folders:
// axle onnx-test [--backend cpu|interp] [--run REGEX] [--no-clustering] DIR...
// It prints PASS, FAIL or SKIP per folder and "N passed, M failed, K
// skipped" last.
func cmdONNXTest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("onnx-test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "cpu", "engine of the compiled device (cpu, interp)")
	threads := fs.Int("threads", 0, "worker threads of the cpu backend (0: GOMAXPROCS)")
	filter := fs.String("run", "", "run only the tests whose name matches this regular expression")
	noCluster := fs.Bool("no-clustering", false, "run every node op by op on the evaluator device")
	noSoft := fs.Bool("no-soft-placement", false, "fail where a node's preferred device refuses it")
	verbose := fs.Bool("v", false, "print each test's time")
	coverage := fs.String("coverage", "", "write the op coverage table (Markdown) of this run to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "axle onnx-test: no directories given")
		return 2
	}
	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintln(stderr, "axle onnx-test: --run:", err)
			return 2
		}
	}
	dirs, err := onnxtest.Find(fs.Args()...)
	if err != nil {
		fmt.Fprintln(stderr, "axle onnx-test:", err)
		return 1
	}
	tols := onnxtest.Manifest(fs.Args()...)
	opts := graph.Options{Backend: *backend, Threads: *threads, NoClustering: *noCluster, NoSoftPlacement: *noSoft}
	counts := map[onnxtest.Status]int{}
	var results []onnxtest.Result
	for _, d := range dirs {
		r := onnxtest.Result{Name: d}
		if re != nil && !re.MatchString(d) {
			continue
		}
		tol, ok := tols[r.Name]
		start := time.Now()
		if !ok {
			tol = onnxtest.DefaultTolerance
		}
		r = onnxtest.Run(context.Background(), d, tol, opts)
		if tt, ok := tols[r.Name]; ok && tt != tol {
			r = onnxtest.Run(context.Background(), d, tt, opts)
		}
		counts[r.Status]++
		results = append(results, r)
		line := r.Status.String() + " " + r.Name
		if r.Reason != "" {
			line += ": " + r.Reason
		}
		if *verbose {
			line += fmt.Sprintf(" (%.0f ms)", time.Since(start).Seconds()*1000)
		}
		fmt.Fprintln(stdout, line)
	}
	if *coverage != "" {
		f, err := os.Create(*coverage)
		if err != nil {
			fmt.Fprintln(stderr, "axle onnx-test:", err)
			return 1
		}
		onnxtest.WriteCoverage(f, results)
		if err := f.Close(); err != nil {
			fmt.Fprintln(stderr, "axle onnx-test:", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed, %d skipped\n", counts[onnxtest.Pass], counts[onnxtest.Fail], counts[onnxtest.Skip])
	if counts[onnxtest.Fail] > 0 {
		return 1
	}
	return 0
}
