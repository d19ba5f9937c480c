package conformance

import (
	"fmt"
	"io"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// Backend runs a module's entry computation on arguments.
type Backend interface {
	Name() string
	Run(m *hlo.Module, args []*hlo.Literal) (*hlo.Literal, error)
}

// Prepare, when set on a Runner, transforms each module before it runs
// (for example the optimization pipeline, for `axle test-cases --opt`).
type Prepare func(*hlo.Module) error

// Runner runs cases on a backend.
type Runner struct {
	Backend Backend
	Prepare Prepare
}

// RunCase parses, verifies, runs and checks one case. A multi-device case
// (Devices > 0) needs a Backend that also implements DeviceBackend; each
// device's result is compared and a mismatch names the device.
func (r *Runner) RunCase(c *Case) error {
	m, err := hlotext.Parse(c.HLO, hlotext.Options{File: c.Name + ".hlo"})
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	if err := hlo.Verify(m); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if r.Prepare != nil {
		if err := r.Prepare(m); err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
	}
	if c.Devices > 0 {
		return r.runDevices(c, m)
	}
	args := make([]*hlo.Literal, len(c.Args))
	for i, a := range c.Args {
		if args[i], err = a.Literal(); err != nil {
			return fmt.Errorf("argument %d: %w", i, err)
		}
	}
	want, err := c.Expected.Literal()
	if err != nil {
		return fmt.Errorf("expected value: %w", err)
	}
	got, err := r.Backend.Run(m, args)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	var tol Tolerance
	if c.Tolerance != nil {
		tol = *c.Tolerance
	}
	return Compare(got, want, tol)
}

// RunFiles runs every case file, writing `PASS name` or `FAIL name: reason`
// per case and, last, `N passed, M failed`.
func (r *Runner) RunFiles(files []string, w io.Writer) (passed, failed int) {
	for _, f := range files {
		c, err := LoadCase(f)
		if err == nil {
			err = r.RunCase(c)
		}
		name := f
		if c != nil && c.Name != "" {
			name = c.Name
		}
		if err != nil {
			failed++
			fmt.Fprintf(w, "FAIL %s: %v\n", name, oneLine(err.Error()))
			continue
		}
		passed++
		fmt.Fprintf(w, "PASS %s\n", name)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
	return passed, failed
}

func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
