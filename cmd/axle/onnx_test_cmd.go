package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/axle-ml/axle/onnx/graph"
	"github.com/axle-ml/axle/onnx/onnxtest"
)

// cmdONNXTest runs ONNX backend-test folders:
// axle onnx-test [--backend cpu|interp] [--run REGEX (matched against the test name)] [--no-clustering] DIR...
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
	failures := fs.String("write-failures", "", "write the failing tests as name<TAB>reason lines to this file (onnx/onnxtest/testdata/known_failures.txt)")
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
		name := filepath.Base(d)
		if re != nil && !re.MatchString(name) {
			continue
		}
		tol, ok := tols[name]
		if !ok {
			tol = onnxtest.DefaultTolerance
		}
		start := time.Now()
		r := onnxtest.Run(context.Background(), d, tol, opts)
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
	if *failures != "" {
		if err := writeFailures(*failures, results); err != nil {
			fmt.Fprintln(stderr, "axle onnx-test:", err)
			return 1
		}
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

// writeFailures writes the failing tests as "name<TAB>reason" lines, the
// reason cut to one line of at most 200 bytes.
func writeFailures(path string, results []onnxtest.Result) error {
	var b strings.Builder
	b.WriteString("# ONNX corpus tests that do not pass yet: name<TAB>reason (TestCorpus fails on any other failure).\n")
	b.WriteString("# Written by axle onnx-test --write-failures; edit the reasons by hand where they say more.\n")
	for _, r := range results {
		if r.Status == onnxtest.Pass {
			continue
		}
		reason := strings.ReplaceAll(r.Reason, "\n", " ")
		if len(reason) > 200 {
			reason = reason[:200]
		}
		fmt.Fprintf(&b, "%s\t%s\n", r.Name, reason)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
