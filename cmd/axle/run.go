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
// [--inputs FILE.npz] [--save-outputs FILE.npz] [--profile [--profile-rows N]] [--cpuprofile FILE] [--memprofile FILE] [--timeout D] [--memory-limit N]
// [--devices N] [--replica-count R] [--num-partitions P] [--spmd MODE] [--distributed] FILE.hlo
func cmdRun(args []string, stdout, stderr io.Writer) int {
	r := &runCmd{stdout: stdout, stderr: stderr}
	fs := r.flags()
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "axle run: give one module file")
		return 2
	}
	if r.backend != "interp" && r.backend != "cpu" {
		fmt.Fprintf(stderr, "axle run: unknown backend %q (available: interp, cpu)\n", r.backend)
		return 2
	}
	if r.devices < 0 || r.localDevices < 0 {
		fmt.Fprintf(stderr, "axle run: --devices %d, --local-devices %d: negative device count\n", r.devices, r.localDevices)
		return 2
	}
	var err error
	if r.limit, err = parseByteSize(r.memLimit); err != nil {
		fmt.Fprintf(stderr, "axle run: --memory-limit: %v\n", err)
		return 2
	}
	r.path = fs.Arg(0)
	recordAllocations(r.memProfile)
	if isONNX(r.path) {
		return runONNX(onnxRun{path: r.path, inputs: r.inputs, saveOutputs: r.saveOutputs, dumpTo: r.dumpTo, cpuProfile: r.cpuProfile, memProfile: r.memProfile,
			backend: r.backend, threads: r.threads, warmup: r.warmup, repeat: r.repeat, seed: r.seed,
			asJSON: r.asJSON, logPlacement: r.logPlacement, noSoft: r.noSoft, noCluster: r.noCluster, profile: r.profile, profileRows: r.profileRows}, stdout, stderr)
	}
	return r.run()
}

// runCmd is one `axle run` of a module: its flags, then its stages.
type runCmd struct {
	stdout, stderr io.Writer

	backend, argsFile, inputs, saveOutputs, cpuProfile, memProfile string
	dumpTo, memLimit, spmdMode                                     string
	threads, warmup, repeat, devices, localDevices                 int
	profileRows                                                    int
	asJSON, optimize, profile, logPlacement                        bool
	noSoft, noCluster, dist                                        bool
	seed                                                           uint64
	timeout, heartbeat                                             time.Duration
	replicas, partitions                                           int64
	of                                                             optFlags

	path  string
	limit int64

	allocs, allocBytes float64 // the timed runs' Go heap allocations, a run
}

func (r *runCmd) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(r.stderr)
	fs.StringVar(&r.backend, "backend", "interp", "backend (interp, cpu)")
	fs.IntVar(&r.threads, "threads", 0, "worker threads of the cpu backend (0: GOMAXPROCS; interp runs on one)")
	fs.IntVar(&r.warmup, "warmup", 0, "untimed runs before the timed ones")
	fs.IntVar(&r.repeat, "repeat", 1, "timed runs")
	fs.BoolVar(&r.asJSON, "json", false, "end with one JSON line of the results")
	fs.StringVar(&r.argsFile, "args", "", "JSON file with a list of argument values (conformance format) instead of random ones")
	fs.StringVar(&r.inputs, "inputs", "", "arguments from NumPy: an .npz archive or comma-separated .npy files, by parameter name or as arg0, arg1, ... (np.savez's arr_0, ...)")
	fs.StringVar(&r.saveOutputs, "save-outputs", "", "write the results to this .npz archive as output_0, output_1, ...")
	fs.Uint64Var(&r.seed, "seed", 1, "seed of the random arguments and elided constants")
	fs.BoolVar(&r.optimize, "opt", false, "run the standard optimization pipeline before running")
	fs.BoolVar(&r.profile, "profile", false, "cpu backend: print the time of each kernel (and label them for pprof)")
	fs.IntVar(&r.profileRows, "profile-rows", 25, "with --profile: how many kernels to list, slowest first (0: all)")
	fs.StringVar(&r.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of the timed runs to this file (go tool pprof)")
	fs.StringVar(&r.memProfile, "memprofile", "", "write a pprof profile of every Go heap allocation, from the load on, to this file (go tool pprof -sample_index=alloc_objects)")
	fs.DurationVar(&r.timeout, "timeout", 0, "cancel compiling (with --opt, optimizing and compiling), and each run, when it takes longer than this (a Go duration: 500ms, 2m; 0: none)")
	fs.BoolVar(&r.logPlacement, "log-placement", false, "ONNX: print each node's device and cluster, and each cluster compiled")
	fs.StringVar(&r.dumpTo, "dump-to", "", "ONNX: write each compiled cluster's HLO module to this folder")
	fs.BoolVar(&r.noSoft, "no-soft-placement", false, "ONNX: fail where a node's preferred device refuses it")
	fs.BoolVar(&r.noCluster, "no-clustering", false, "ONNX: run every node op by op on the evaluator device")
	fs.Int64Var(&r.replicas, "replica-count", 0, "run the module as this many replicas (as XLA's HloModuleConfig; 0: the module's)")
	fs.Int64Var(&r.partitions, "num-partitions", 0, "run the module as this many partitions (0: the module's)")
	fs.BoolVar(&r.dist, "distributed", false, "join the job a launcher started (mpirun, srun, a Kubernetes indexed Job, or AXLE_COORDINATOR_ADDRESS/AXLE_NUM_PROCESSES/AXLE_PROCESS_ID) and run this process's devices")
	fs.DurationVar(&r.heartbeat, "heartbeat", 0, "with --distributed: how long a silent process may stay silent before the job fails naming it (0: 10s)")
	fs.IntVar(&r.localDevices, "local-devices", 0, "with --distributed: devices per process (0: AXLE_LOCAL_DEVICES, else 1)")
	fs.StringVar(&r.spmdMode, "spmd", "auto", "partition a module carrying sharding annotations over global shapes into per-device programs (auto: when it does; on; off: every device runs the whole module)")
	fs.IntVar(&r.devices, "devices", 0, "CPU devices of the client (0: as many as the module's replica_count × num_partitions)")
	fs.StringVar(&r.memLimit, "memory-limit", "", "the client's memory limit in bytes, with an optional K, M or G suffix (powers of 1024; -1: none; default 3/4 of physical memory)")
	r.of.register(fs)
	return fs
}

// fail prints err after the module's path and returns status 1.
func (r *runCmd) fail(err error) int {
	fmt.Fprintf(r.stderr, "%s: %v\n", r.path, err)
	return 1
}

// run loads, prepares, compiles and runs the module, then reports.
func (r *runCmd) run() int {
	start := time.Now()
	m, argv, sp, paused, code := r.prepare()
	if code != 0 {
		return code
	}
	start = start.Add(paused)
	ctx, cancel := withTimeout(r.timeout)
	defer cancel()
	if r.optimize {
		po := r.of.options()
		po.Observers = append(po.Observers, func(pass.Event) error { return ctx.Err() })
		if _, err := opt.Standard().RunWith(m, po); err != nil {
			return r.fail(err)
		}
	}
	client, closeJob, err := r.client(m)
	if err != nil {
		fmt.Fprintf(r.stderr, "axle run: --distributed: %v\n", err)
		return 1
	}
	defer closeJob()
	x, err := compileModule(ctx, m, client, axle.CompileOptions{NoOptimize: r.optimize, Profile: r.profile,
		ExpectedRuns: r.warmup + max(r.repeat, 1)})
	cancel()
	if err != nil {
		return r.fail(err)
	}
	r.printEngine(x)
	compile := time.Since(start)
	if r.argsFile != "" {
		if argv, err = readArgs(r.argsFile); err != nil {
			fmt.Fprintf(r.stderr, "axle run: --args: %v\n", err)
			return 1
		}
	}
	meter := &allocMeter{profile: r.memProfile}
	result, times, err := runSharded(x, argv, sp, runOptions{r.warmup, max(r.repeat, 1), r.cpuProfile, r.timeout, meter})
	if err != nil {
		return r.fail(err)
	}
	if r.allocs, r.allocBytes, err = meter.stop(len(times)); err != nil {
		fmt.Fprintf(r.stderr, "axle run: %v\n", err)
		return 1
	}
	if r.saveOutputs != "" {
		if err := writeOutputs(r.saveOutputs, slices.Concat(result...)); err != nil {
			fmt.Fprintf(r.stderr, "axle run: --save-outputs: %v\n", err)
			return 1
		}
	}
	r.report(x, result, times, compile, sp != nil)
	return 0
}

// prepare loads and verifies the module, makes its arguments (and fills
// its elided constants: before compiling), and partitions it when it
// asks to be; paused is the time making the arguments took, which is not
// compile time.
func (r *runCmd) prepare() (m *hlo.Module, argv []*hlo.Literal, sp *spmdRun, paused time.Duration, code int) {
	mods, in, err := loadForRun(r.path, r.inputs, r.argsFile, r.stderr)
	if err != nil {
		fmt.Fprintln(r.stderr, err)
		return nil, nil, nil, 0, 1
	}
	m = mods[0]
	if r.replicas > 0 {
		m.ReplicaCount = r.replicas
	}
	if r.partitions > 0 {
		m.NumPartitions = r.partitions
	}
	if err := hlo.Verify(m); err != nil {
		return nil, nil, nil, 0, r.fail(err)
	}
	t := time.Now()
	argv = eval.RandomArguments(m, r.seed)
	if in != nil {
		if argv, err = in.bind(m); err != nil {
			fmt.Fprintf(r.stderr, "axle run: --inputs: %v\n", err)
			return nil, nil, nil, 0, 1
		}
	}
	paused = time.Since(t)
	m, sp, note, err := partitionForRun(m, r.spmdMode)
	if err != nil {
		return nil, nil, nil, 0, r.fail(err)
	}
	if note != "" {
		fmt.Fprintln(r.stdout, note)
	}
	return m, argv, sp, paused, 0
}

// client is the client's options: as many devices as the module declares
// (or --devices), or with --distributed the job's; closeJob leaves it.
func (r *runCmd) client(m *hlo.Module) (opts axle.ClientOptions, closeJob func(), err error) {
	opts = axle.ClientOptions{Backend: r.backend, Threads: r.threads, MemoryLimit: r.limit,
		Devices: max(r.devices, int(max(m.ReplicaCount, 1)*max(m.NumPartitions, 1)))}
	if !r.dist {
		return opts, func() {}, nil
	}
	node, err := joinJob(r.localDevices, r.heartbeat)
	if err != nil {
		return opts, nil, err
	}
	opts.Cluster, opts.Devices = node, 0
	return opts, func() { node.Close() }, nil
}

// printEngine says, on the cpu backend, what the module compiled to.
func (r *runCmd) printEngine(x *axle.Executable) {
	if r.backend != "cpu" {
		return
	}
	vendor, family, model := kernels.CPUModel()
	fmt.Fprintf(r.stdout, "cpu: %s family %d model %d; kernels %s\n", vendor, family, model, kernels.Kernels())
	fmt.Fprintf(r.stdout, "engine: %s\n", x.Engine())
	fmt.Fprintf(r.stdout, "lowered %s\n", aot.LoweringSummary(x.Lowering()))
	if fb := x.Fallbacks(); len(fb) > 0 {
		fmt.Fprintf(r.stdout, "on the evaluator (no kernel): %s\n", strings.Join(fb, "; "))
	}
}

type output struct {
	Shape    string    `json:"shape"`
	Checksum jsonFloat `json:"checksum"`
}

// jsonFloat is a checksum in the JSON line: JSON has no NaN or infinity, and
// a result that holds them (a masked softmax, a log of zero) must still give
// a line a script can read, so those are written as the strings "NaN",
// "+Inf" and "-Inf".
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if v := float64(f); math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(float64(f))
}

// printJSON writes v as the run's last line; should it not encode, the line
// is still JSON, holding the reason.
func printJSON(w io.Writer, v any) {
	line, err := json.Marshal(v)
	if err != nil {
		line, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	fmt.Fprintln(w, string(line))
}

// report prints each device's results (one set when a partitioned
// module's were put back together), the timings and the memory, and the
// JSON line.
func (r *runCmd) report(x *axle.Executable, result [][]*hlo.Literal, times []time.Duration, compile time.Duration, assembled bool) {
	slices.Sort(times)
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
	var outs []output
	for d, rs := range result {
		if rep, part := x.Assignment(); rep*part > 1 && (!assembled || len(result) > 1) {
			dev := x.Devices()[d]
			fmt.Fprintf(r.stdout, "device %d (process %d)\n", dev.ID, dev.Process)
		}
		for _, res := range rs {
			for _, l := range aot.Leaves(res) {
				outs = append(outs, output{l.Shape().HumanString(), jsonFloat(checksum(l))})
				fmt.Fprintf(r.stdout, "result %s checksum %.9g\n", l.Shape().HumanString(), checksum(l))
			}
		}
	}
	fmt.Fprintf(r.stdout, "compile %.3f ms; run min %.3f ms, median %.3f ms, max %.3f ms over %d runs\n",
		ms(compile), ms(times[0]), ms(times[len(times)/2]), ms(times[len(times)-1]), len(times))
	fmt.Fprintln(r.stdout, allocLine(r.allocs, r.allocBytes))
	report := map[string]any{
		"compile_ms": ms(compile),
		"run_ms":     map[string]float64{"min": ms(times[0]), "median": ms(times[len(times)/2]), "max": ms(times[len(times)-1])},
		"outputs":    outs,
		"allocs":     map[string]float64{"per_run": r.allocs, "bytes_per_run": r.allocBytes},
	}
	fmt.Fprintf(r.stdout, "measured peak: %s in one execution (arguments excluded)\n", byteSize(x.PeakBytes()))
	report["measured_peak_bytes"] = x.PeakBytes()
	if r.backend == "cpu" {
		mem := x.Memory()
		fmt.Fprintf(r.stdout, "memory: peak %s of intermediates in one arena (%s if each had its own buffer, %d computed in place); outputs %s\n",
			byteSize(mem.Peak), byteSize(mem.Intermediates), mem.InPlace, byteSize(mem.Outputs))
		report["peak_bytes"], report["intermediate_bytes"] = mem.Peak, mem.Intermediates
		vendor, family, model := kernels.CPUModel()
		report["cpu"] = map[string]any{"vendor": vendor, "family": family, "model": model, "kernels": kernels.Kernels()}
		if r.profile {
			fmt.Fprint(r.stdout, x.ProfileTable(r.profileRows))
		}
	}
	if r.asJSON {
		printJSON(r.stdout, report)
	}
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
	meter          *allocMeter   // started as the timed runs start
}

// timeRuns executes x on args warmup untimed and repeat timed times and
// returns the last run's results. Each run's outputs are released before
// the next, so that their storage is reused as in a serving loop. With a
// profile path, the timed runs are profiled (pprof CPU profile); with a
// timeout, each run is cancelled when it takes longer.
func timeRuns(x *axle.Executable, args [][]*hlo.Literal, o runOptions) ([][]*hlo.Literal, []time.Duration, error) {
	warmup, repeat, profile := o.warmup, o.repeat, o.profile
	// One argument list for every device is one set of buffers, shared
	// (executions only read them), not a copy per device.
	bufs := make([][]*axle.Buffer, len(x.Devices()))
	for d := range bufs {
		if d >= len(args) {
			bufs[d] = bufs[len(args)-1]
			continue
		}
		for i, a := range args[d] {
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
		if i == warmup {
			o.meter.start()
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
