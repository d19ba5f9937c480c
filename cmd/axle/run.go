package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/backend/cpu/kernels"
	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/distributed"
	"github.com/axle-ml/axle/eval"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/opt"
	"github.com/axle-ml/axle/pass"
)

// cmdRun compiles (for interp: verifies) a module, feeds seeded random
// arguments and runs it, printing result shapes, checksums and timing:
// axle run [--backend interp] [--opt] [--threads T] [--warmup K] [--repeat N] [--json] [--args FILE]
// [--inputs FILE.npz] [--save-outputs FILE.npz] [--cpuprofile FILE] [--timeout D] [--memory-limit N] FILE.hlo
func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "interp", "backend (interp, cpu)")
	threads := fs.Int("threads", 0, "worker threads of the cpu backend (0: GOMAXPROCS; interp runs on one)")
	warmup := fs.Int("warmup", 0, "untimed runs before the timed ones")
	repeat := fs.Int("repeat", 1, "timed runs")
	asJSON := fs.Bool("json", false, "end with one JSON line of the results")
	argsFile := fs.String("args", "", "JSON file with a list of argument values (conformance format) instead of random ones")
	inputs := fs.String("inputs", "", "arguments from NumPy: an .npz archive or comma-separated .npy files, by parameter name or as arg0, arg1, ... (np.savez's arr_0, ...)")
	saveOutputs := fs.String("save-outputs", "", "write the results to this .npz archive as output_0, output_1, ...")
	seed := fs.Uint64("seed", 1, "seed of the random arguments and elided constants")
	optimize := fs.Bool("opt", false, "run the standard optimization pipeline before running")
	profile := fs.Bool("profile", false, "cpu backend: print the time of each kernel (and label them for pprof)")
	cpuProfile := fs.String("cpuprofile", "", "write a pprof CPU profile of the timed runs to this file (go tool pprof)")
	timeout := fs.Duration("timeout", 0, "cancel compiling (with --opt, optimizing and compiling), and each run, when it takes longer than this (a Go duration: 500ms, 2m; 0: none)")
	logPlacement := fs.Bool("log-placement", false, "ONNX: print each node's device and cluster, and each cluster compiled")
	dumpTo := fs.String("dump-to", "", "ONNX: write each compiled cluster's HLO module to this folder")
	noSoft := fs.Bool("no-soft-placement", false, "ONNX: fail where a node's preferred device refuses it")
	noCluster := fs.Bool("no-clustering", false, "ONNX: run every node op by op on the evaluator device")
	replicas := fs.Int64("replica-count", 0, "run the module as this many replicas (as XLA's HloModuleConfig; 0: the module's)")
	partitions := fs.Int64("num-partitions", 0, "run the module as this many partitions (0: the module's)")
	dist := fs.Bool("distributed", false, "join the job a launcher started (mpirun, srun, a Kubernetes indexed Job, or AXLE_COORDINATOR_ADDRESS/AXLE_NUM_PROCESSES/AXLE_PROCESS_ID) and run this process's devices")
	heartbeat := fs.Duration("heartbeat", 0, "with --distributed: how long a silent process may stay silent before the job fails naming it (0: 10s)")
	localDevices := fs.Int("local-devices", 0, "with --distributed: devices per process (0: AXLE_LOCAL_DEVICES, else 1)")
	spmdMode := fs.String("spmd", "auto", "partition a module carrying sharding annotations over global shapes into per-device programs (auto: when it does; on; off: every device runs the whole module)")
	devices := fs.Int("devices", 0, "CPU devices of the client (0: as many as the module's replica_count × num_partitions)")
	memLimit := fs.String("memory-limit", "", "the client's memory limit in bytes, with an optional K, M or G suffix (powers of 1024; -1: none; default 3/4 of physical memory)")
	var of optFlags
	of.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "axle run: give one module file")
		return 2
	}
	if *backend != "interp" && *backend != "cpu" {
		fmt.Fprintf(stderr, "axle run: unknown backend %q (available: interp, cpu)\n", *backend)
		return 2
	}
	limit, err := parseByteSize(*memLimit)
	if err != nil {
		fmt.Fprintf(stderr, "axle run: --memory-limit: %v\n", err)
		return 2
	}
	path := fs.Arg(0)
	if isONNX(path) {
		return runONNX(onnxRun{path: path, inputs: *inputs, saveOutputs: *saveOutputs, dumpTo: *dumpTo,
			backend: *backend, threads: *threads, warmup: *warmup, repeat: *repeat, seed: *seed,
			asJSON: *asJSON, logPlacement: *logPlacement, noSoft: *noSoft, noCluster: *noCluster, profile: *profile}, stdout, stderr)
	}
	start := time.Now()
	mods, in, err := loadForRun(path, *inputs, *argsFile, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	m := mods[0]
	if *replicas > 0 {
		m.ReplicaCount = *replicas
	}
	if *partitions > 0 {
		m.NumPartitions = *partitions
	}
	if err := hlo.Verify(m); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	// Making up the arguments (64 MB of random floats for some workloads)
	// is not compile time; it also fills the module's elided constants, so
	// it comes before compiling.
	pause := time.Now()
	argv := eval.RandomArguments(m, *seed)
	if in != nil {
		if argv, err = in.bind(m); err != nil {
			fmt.Fprintf(stderr, "axle run: --inputs: %v\n", err)
			return 1
		}
	}
	start = start.Add(time.Since(pause))
	m, sp, note, err := partitionForRun(m, *spmdMode)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	if note != "" {
		fmt.Fprintln(stdout, note)
	}
	ctx, cancel := withTimeout(*timeout)
	defer cancel()
	if *optimize {
		po := of.options()
		po.Observers = append(po.Observers, func(pass.Event) error { return ctx.Err() })
		if _, err := opt.Standard().RunWith(m, po); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
			return 1
		}
	}
	client := axle.ClientOptions{Backend: *backend, Threads: *threads, MemoryLimit: limit,
		Devices: max(*devices, int(max(m.ReplicaCount, 1)*max(m.NumPartitions, 1)))}
	if *dist {
		node, err := joinJob(*localDevices, *heartbeat)
		if err != nil {
			fmt.Fprintf(stderr, "axle run: --distributed: %v\n", err)
			return 1
		}
		defer node.Close()
		client.Cluster, client.Devices = node, 0
	}
	x, err := compileModule(ctx, m, client, axle.CompileOptions{NoOptimize: *optimize, Profile: *profile,
		ExpectedRuns: *warmup + max(*repeat, 1)})
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	if *backend == "cpu" {
		vendor, family, model := kernels.CPUModel()
		fmt.Fprintf(stdout, "cpu: %s family %d model %d; kernels %s\n", vendor, family, model, kernels.Kernels())
		fmt.Fprintf(stdout, "engine: %s\n", x.Engine())
		fmt.Fprintf(stdout, "lowered %s\n", aot.LoweringSummary(x.Lowering()))
		if fb := x.Fallbacks(); len(fb) > 0 {
			fmt.Fprintf(stdout, "on the evaluator (no kernel): %s\n", strings.Join(fb, "; "))
		}
	}
	compile := time.Since(start)
	if *argsFile != "" {
		if argv, err = readArgs(*argsFile); err != nil {
			fmt.Fprintf(stderr, "axle run: --args: %v\n", err)
			return 1
		}
	}
	result, times, err := runSharded(x, argv, sp, runOptions{*warmup, max(*repeat, 1), *cpuProfile, *timeout})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 1
	}
	if *saveOutputs != "" {
		if err := writeOutputs(*saveOutputs, slices.Concat(result...)); err != nil {
			fmt.Fprintf(stderr, "axle run: --save-outputs: %v\n", err)
			return 1
		}
	}
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	type output struct {
		Shape    string  `json:"shape"`
		Checksum float64 `json:"checksum"`
	}
	var outs []output
	for d, rs := range result {
		if r, p := x.Assignment(); r*p > 1 && (sp == nil || len(result) > 1) {
			dev := x.Devices()[d]
			fmt.Fprintf(stdout, "device %d (process %d)\n", dev.ID, dev.Process)
		}
		for _, r := range rs {
			for _, l := range aot.Leaves(r) {
				outs = append(outs, output{l.Shape().HumanString(), checksum(l)})
				fmt.Fprintf(stdout, "result %s checksum %.9g\n", l.Shape().HumanString(), checksum(l))
			}
		}
	}
	fmt.Fprintf(stdout, "compile %.3f ms; run min %.3f ms, median %.3f ms, max %.3f ms over %d runs\n",
		ms(compile), ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]), len(times))
	report := map[string]any{
		"compile_ms": ms(compile),
		"run_ms":     map[string]float64{"min": ms(times[0]), "median": ms(times[len(times)/2]), "max": ms(times[len(times)-1])},
		"outputs":    outs,
	}
	fmt.Fprintf(stdout, "measured peak: %s in one execution (arguments excluded)\n", byteSize(x.PeakBytes()))
	report["measured_peak_bytes"] = x.PeakBytes()
	if *backend == "cpu" {
		mem := x.Memory()
		fmt.Fprintf(stdout, "memory: peak %s of intermediates in one arena (%s if each had its own buffer, %d computed in place); outputs %s\n",
			byteSize(mem.Peak), byteSize(mem.Intermediates), mem.InPlace, byteSize(mem.Outputs))
		report["peak_bytes"], report["intermediate_bytes"] = mem.Peak, mem.Intermediates
		vendor, family, model := kernels.CPUModel()
		report["cpu"] = map[string]any{"vendor": vendor, "family": family, "model": model, "kernels": kernels.Kernels()}
		if *profile {
			fmt.Fprint(stdout, x.ProfileTable(20))
		}
	}
	if *asJSON {
		line, _ := json.Marshal(report)
		fmt.Fprintln(stdout, string(line))
	}
	return 0
}

// compileModule compiles m through the runtime API on a client of the
// backend, stopping once ctx is done.
func compileModule(ctx context.Context, m *hlo.Module, client axle.ClientOptions, opts axle.CompileOptions) (*axle.Executable, error) {
	c, err := axle.NewClient(client)
	if err != nil {
		return nil, err
	}
	return c.CompileContext(ctx, m, opts)
}

// withTimeout is a context done after timeout (never, if 0).
func withTimeout(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), timeout)
}

// runOptions say how timeRuns runs.
type runOptions struct {
	warmup, repeat int
	profile        string        // pprof CPU profile of the timed runs, or ""
	timeout        time.Duration // each run's, or 0
}

// timeRuns executes x on args warmup untimed and repeat timed times and
// returns the last run's results. Each run's outputs are released before
// the next, so that their storage is reused as in a serving loop. With a
// profile path, the timed runs are profiled (pprof CPU profile); with a
// timeout, each run is cancelled when it takes longer.
func timeRuns(x *axle.Executable, args [][]*hlo.Literal, o runOptions) ([][]*hlo.Literal, []time.Duration, error) {
	warmup, repeat, profile := o.warmup, o.repeat, o.profile
	bufs := make([][]*axle.Buffer, len(x.Devices()))
	for d := range bufs {
		as := args[min(d, len(args)-1)]
		for i, a := range as {
			b, err := x.Client().BufferFromLiteral(a)
			if err != nil {
				return nil, nil, fmt.Errorf("argument %d: %w", i, err)
			}
			bufs[d] = append(bufs[d], b)
		}
	}
	var outs [][]*axle.Buffer
	var times []time.Duration
	for i := range warmup + repeat {
		if i == warmup && profile != "" {
			stop, err := startCPUProfile(profile)
			if err != nil {
				return nil, nil, err
			}
			defer stop()
		}
		release(outs)
		t0 := time.Now()
		var err error
		if outs, err = execute(x, bufs, o.timeout); err != nil {
			return nil, nil, err
		}
		if i >= warmup {
			times = append(times, time.Since(t0))
		}
	}
	result := make([][]*hlo.Literal, len(outs))
	for d, bs := range outs {
		for _, o := range bs {
			l, err := o.ToLiteral()
			if err != nil {
				return nil, nil, err
			}
			result[d] = append(result[d], l)
		}
	}
	release(outs)
	return result, times, nil
}

// execute runs x once on each of its devices (bufs[d] are device d's
// arguments), cancelled after timeout (0: never).
func execute(x *axle.Executable, bufs [][]*axle.Buffer, timeout time.Duration) ([][]*axle.Buffer, error) {
	ctx, cancel := withTimeout(timeout)
	defer cancel()
	return x.ExecuteDevices(ctx, axle.ExecuteOptions{}, bufs)
}

// runSharded is timeRuns with every device given the same arguments, or
// for a partitioned module its pieces of them, with the devices' results
// put back together when this process has every device.
func runSharded(x *axle.Executable, args []*hlo.Literal, sp *spmdRun, o runOptions) ([][]*hlo.Literal, []time.Duration, error) {
	if sp == nil {
		return timeRuns(x, [][]*hlo.Literal{args}, o)
	}
	r, p := x.Assignment()
	devArgs, err := sp.split(x, args, r*p)
	if err != nil {
		return nil, nil, err
	}
	result, times, err := timeRuns(x, devArgs, o)
	if err != nil || len(result) < r*p {
		return result, times, err
	}
	whole, err := sp.assemble(result)
	return [][]*hlo.Literal{whole}, times, err
}

// parseByteSize reads a byte count with an optional K, M or G suffix
// (KiB, MiB, GiB); "" is 0 (the client's default).
func parseByteSize(s string) (int64, error) {
	mult := int64(1)
	num := strings.TrimSpace(s)
	if num == "" {
		return 0, nil
	}
	switch num[len(num)-1] {
	case 'K', 'k':
		mult = 1 << 10
	case 'M', 'm':
		mult = 1 << 20
	case 'G', 'g':
		mult = 1 << 30
	}
	if mult > 1 {
		num = num[:len(num)-1]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a byte count (like 512M or 8G)", s)
	}
	if n > 0 && n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// startCPUProfile starts a pprof CPU profile written to path.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func release(bufs [][]*axle.Buffer) {
	for _, bs := range bufs {
		for _, b := range bs {
			b.Release()
		}
	}
}

func readArgs(path string) ([]*hlo.Literal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var vals []conformance.Value
	if err := json.Unmarshal(b, &vals); err != nil {
		return nil, err
	}
	out := make([]*hlo.Literal, len(vals))
	for i, v := range vals {
		if out[i], err = v.Literal(); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	return out, nil
}

// checksum is what `axle run` prints of a result (aot.Checksum, which
// ahead-of-time commands print too).
func checksum(l *hlo.Literal) float64 { return aot.Checksum(l) }

// byteSize formats n bytes for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// joinJob joins the job this process's launcher started, with local
// devices per process (0: the environment's, else 1) and a heartbeat
// timeout (0: the default).
func joinJob(local int, heartbeat time.Duration) (*distributed.Node, error) {
	cfg, launched, err := distributed.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if !launched {
		return nil, fmt.Errorf("no launcher environment (mpirun, srun, a Kubernetes indexed Job) and no %s", distributed.EnvCoordinator)
	}
	if local > 0 {
		cfg.LocalDevices = local
	}
	cfg.Heartbeat = heartbeat
	return distributed.Join(context.Background(), cfg)
}
