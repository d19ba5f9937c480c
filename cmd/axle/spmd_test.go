package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

var resultLine = regexp.MustCompile(`(?m)^result .*$`)

// A dense layer annotated for 4 partitions (as JAX writes it before
// XLA's SPMD partitioner) is partitioned by axle run, each device given
// its pieces of the arguments; the reassembled result is the
// unpartitioned module's, on both engines.
func TestRunPartitionsShardedModule(t *testing.T) {
	const file = "../../examples/devices/sharded_dense.hlo"
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir() + "/plain.hlo"
	if err := os.WriteFile(plain, []byte(strings.Replace(string(text), ", num_partitions=4", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if code := run([]string{"run", "--backend", "interp", plain}, &want, os.Stderr); code != 0 {
		t.Fatalf("unpartitioned run: exit %d", code)
	}
	for _, backend := range []string{"interp", "cpu"} {
		var got bytes.Buffer
		if code := run([]string{"run", "--backend", backend, file}, &got, os.Stderr); code != 0 {
			t.Fatalf("%s: exit %d", backend, code)
		}
		if !strings.Contains(got.String(), "spmd: partitioned over 4 devices") {
			t.Fatalf("%s: not partitioned:\n%s", backend, got.String())
		}
		g, w := resultLine.FindAllString(got.String(), -1), resultLine.FindAllString(want.String(), -1)
		if strings.Join(g, "\n") != strings.Join(w, "\n") || len(w) != 1 {
			t.Fatalf("%s: partitioned run printed %v, the unpartitioned module %v", backend, g, w)
		}
	}
}

// What jax.export writes for a sharded function (StableHLO with
// mhlo.sharding attributes and a @Sharding custom call) is partitioned
// too, and prints what every device running the whole module prints.
func TestRunPartitionsStableHLO(t *testing.T) {
	const file = "../../examples/devices/sharded_jax.mlir"
	var want bytes.Buffer
	if code := run([]string{"run", "--backend", "interp", "--spmd", "off", file}, &want, os.Stderr); code != 0 {
		t.Fatalf("--spmd off: exit %d", code)
	}
	w := resultLine.FindAllString(want.String(), -1)
	for _, backend := range []string{"interp", "cpu"} {
		var got bytes.Buffer
		if code := run([]string{"run", "--backend", backend, file}, &got, os.Stderr); code != 0 {
			t.Fatalf("%s: exit %d", backend, code)
		}
		g := resultLine.FindAllString(got.String(), -1)
		if !strings.Contains(got.String(), "spmd: partitioned over 4 devices") || len(g) != 1 || len(w) != 4 || g[0] != w[0] {
			t.Fatalf("%s: partitioned run printed %v, the whole module on every device %v\n%s", backend, g, w, got.String())
		}
	}
}

// Bad multi-device flags say what is wrong.
func TestRunDeviceFlagErrors(t *testing.T) {
	for _, k := range []string{"AXLE_COORDINATOR_ADDRESS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "JOB_COMPLETION_INDEX"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--spmd", "sometimes", "../../examples/devices/sharded_dense.hlo"}, `--spmd "sometimes": want auto, on or off`},
		{[]string{"run", "--distributed", stepExample}, "no launcher environment"},
		{[]string{"run", "--devices", "-2", stepExample}, "negative device count"},
	} {
		var out, errs bytes.Buffer
		if code := run(c.args, &out, &errs); code == 0 || !strings.Contains(errs.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want it to say %q", c.args, code, errs.String(), c.want)
		}
	}
}
