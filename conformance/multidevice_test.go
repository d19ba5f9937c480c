package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/axle-ml/axle/conformance"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// multiDeviceFiles lists the cases under multidevice/ (written by
// multidevice/generate.py from XLA's collective tests).
func multiDeviceFiles(t *testing.T) []string {
	t.Helper()
	files, err := conformance.FindCases("multidevice")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 90 {
		t.Fatalf("%d multi-device case files, want at least 30 cases at 2, 4 and 8 devices", len(files))
	}
	return files
}

// literals decodes a case's per-device arguments and expected values.
func literals(t *testing.T, c *conformance.Case) ([][]*hlo.Literal, []*hlo.Literal) {
	t.Helper()
	args := make([][]*hlo.Literal, c.Devices)
	for d, vs := range c.DeviceArgs {
		for i, v := range vs {
			l, err := v.Literal()
			if err != nil {
				t.Fatalf("device %d argument %d: %v", d, i, err)
			}
			args[d] = append(args[d], l)
		}
	}
	want := make([]*hlo.Literal, c.Devices)
	for d, v := range c.DeviceExpected {
		l, err := v.Literal()
		if err != nil {
			t.Fatalf("device %d expected: %v", d, err)
		}
		want[d] = l
	}
	return args, want
}

// TestMultiDeviceCasesWellFormed: every multi-device case parses and
// verifies, its replica_count × num_partitions is its device count, its
// name matches its path, and each device's arguments and expected value
// fit the entry computation's signature.
func TestMultiDeviceCasesWellFormed(t *testing.T) {
	ops := map[string]bool{}
	for _, f := range multiDeviceFiles(t) {
		rel := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(f), "multidevice/"), ".json")
		t.Run(rel, func(t *testing.T) {
			c, err := conformance.LoadCase(f)
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != rel || !strings.HasPrefix(rel, c.Op+"/") {
				t.Errorf("name %q op %q at path %s", c.Name, c.Op, rel)
			}
			m, err := hlotext.Parse(c.HLO, hlotext.Options{File: c.Name + ".hlo"})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if err := hlo.Verify(m); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if n := max(m.ReplicaCount, 1) * max(m.NumPartitions, 1); n != int64(c.Devices) || c.Devices < 2 {
				t.Errorf("%d replicas × %d partitions for %d devices", m.ReplicaCount, m.NumPartitions, c.Devices)
			}
			args, want := literals(t, c)
			for d := range c.Devices {
				if err := m.Entry.CheckArguments(args[d]); err != nil {
					t.Errorf("device %d: %v", d, err)
				}
				if !want[d].Shape().Compatible(m.Entry.ResultShape()) {
					t.Errorf("device %d: expected %s for a root of %s", d, want[d].Shape().HumanString(), m.Entry.ResultShape().HumanString())
				}
			}
			ops[c.Op] = true
		})
	}
	for _, op := range []string{"all-reduce", "all-gather", "all-to-all", "reduce-scatter", "collective-permute", "collective-broadcast", "replica-id", "partition-id"} {
		if !ops[op] {
			t.Errorf("no case for %s", op)
		}
	}
}

// expectedBackend answers RunDevices with given results, standing in for a
// runtime.
type expectedBackend struct {
	results []*hlo.Literal
}

func (b *expectedBackend) Name() string { return "fake" }
func (b *expectedBackend) Run(*hlo.Module, []*hlo.Literal) (*hlo.Literal, error) {
	return nil, os.ErrInvalid
}
func (b *expectedBackend) RunDevices(_ *hlo.Module, args [][]*hlo.Literal) ([]*hlo.Literal, error) {
	return b.results, nil
}

// singleBackend runs one device only.
type singleBackend struct{}

func (singleBackend) Name() string { return "single" }
func (singleBackend) Run(*hlo.Module, []*hlo.Literal) (*hlo.Literal, error) {
	return nil, os.ErrInvalid
}

// TestMultiDeviceRunner: the runner passes a backend returning each
// device's expected value, fails one that swaps devices 0 and 1 naming
// device 0, and refuses a backend without RunDevices.
func TestMultiDeviceRunner(t *testing.T) {
	c, err := conformance.LoadCase("multidevice/replica-id/replica_id_4dev.json")
	if err != nil {
		t.Fatal(err)
	}
	_, want := literals(t, c)
	r := &conformance.Runner{Backend: &expectedBackend{results: want}}
	if err := r.RunCase(c); err != nil {
		t.Errorf("expected values rejected: %v", err)
	}
	swapped := []*hlo.Literal{want[1], want[0], want[2], want[3]}
	r = &conformance.Runner{Backend: &expectedBackend{results: swapped}}
	if err := r.RunCase(c); err == nil || !strings.HasPrefix(err.Error(), "device 0:") {
		t.Errorf("swapped results: err = %v, want one naming device 0", err)
	}
	r = &conformance.Runner{Backend: &expectedBackend{results: want[:3]}}
	if err := r.RunCase(c); err == nil || !strings.Contains(err.Error(), "3 results for 4 devices") {
		t.Errorf("three results for four devices: err = %v", err)
	}
	r = &conformance.Runner{Backend: singleBackend{}}
	if err := r.RunCase(c); err == nil || !strings.Contains(err.Error(), "DeviceBackend") {
		t.Errorf("single-device backend: err = %v, want one naming DeviceBackend", err)
	}
}

// TestMultiDeviceDecoding: per-device args and expected decode by device;
// counts that disagree with "devices" are refused; a file without
// "devices" still decodes as a single-device case.
func TestMultiDeviceDecoding(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// f32[1] {1} is AACAPw==, {-2} is AAAAwA==.
	one, minusTwo := `{"shape":"f32[1]","data":"AACAPw=="}`, `{"shape":"f32[1]","data":"AAAAwA=="}`
	c, err := conformance.LoadCase(write("ok.json", `{"name":"x/ok","op":"x","hlo":"","devices":2,
		"args":[[`+one+`],[`+minusTwo+`]],"expected":[`+minusTwo+`,`+one+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Devices != 2 || len(c.DeviceArgs) != 2 || len(c.DeviceExpected) != 2 || c.Args != nil {
		t.Fatalf("decoded %+v", c)
	}
	if l, _ := c.DeviceArgs[1][0].Literal(); l.GetFloat64(0) != -2 {
		t.Errorf("device 1's argument decoded as %v", l.GetFloat64(0))
	}
	if l, _ := c.DeviceExpected[1].Literal(); l.GetFloat64(0) != 1 {
		t.Errorf("device 1's expected value decoded as %v", l.GetFloat64(0))
	}
	for name, body := range map[string]string{
		"short_expected.json": `{"name":"x/a","op":"x","hlo":"","devices":2,"args":[[],[]],"expected":[` + one + `]}`,
		"short_args.json":     `{"name":"x/b","op":"x","hlo":"","devices":2,"args":[[]],"expected":[` + one + `,` + one + `]}`,
		"flat_expected.json":  `{"name":"x/c","op":"x","hlo":"","devices":2,"args":[[],[]],"expected":` + one + `}`,
	} {
		if _, err := conformance.LoadCase(write(name, body)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	c, err = conformance.LoadCase(write("single.json", `{"name":"x/s","op":"x","hlo":"","args":[`+one+`],"expected":`+minusTwo+`}`))
	if err != nil || c.Devices != 0 || len(c.Args) != 1 || c.Expected.Shape != "f32[1]" || c.DeviceArgs != nil {
		t.Errorf("single-device case decoded as %+v (%v)", c, err)
	}
}
