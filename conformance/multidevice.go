package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/axle-ml/axle/hlo"
)

// DeviceBackend runs a module on several devices at once: args[d] are device d's arguments; it returns each
// device's result.
type DeviceBackend interface {
	RunDevices(m *hlo.Module, args [][]*hlo.Literal) ([]*hlo.Literal, error)
}

// decode reads a case file's JSON. A single-device case decodes as the
// struct's tags say; a multi-device one ("devices": N) has args as N lists
// of values and expected as N values, which land in DeviceArgs and
// DeviceExpected.
func (c *Case) decode(b []byte) error {
	var head struct {
		Devices  int             `json:"devices"`
		Args     json.RawMessage `json:"args"`
		Expected json.RawMessage `json:"expected"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if head.Devices <= 0 {
		if head.Devices < 0 {
			return fmt.Errorf("devices is %d: it must be positive when present", head.Devices)
		}
		return json.Unmarshal(b, c)
	}
	// Decode the common keys without args and expected, whose per-device
	// form the single-device fields cannot hold.
	var rest map[string]json.RawMessage
	if err := json.Unmarshal(b, &rest); err != nil {
		return err
	}
	delete(rest, "args")
	delete(rest, "expected")
	common, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(common, c); err != nil {
		return err
	}
	if head.Args != nil {
		if err := json.Unmarshal(head.Args, &c.DeviceArgs); err != nil {
			return fmt.Errorf("args of a %d-device case (a list of per-device argument lists): %w", head.Devices, err)
		}
	}
	if err := json.Unmarshal(head.Expected, &c.DeviceExpected); err != nil {
		return fmt.Errorf("expected of a %d-device case (a list of per-device values): %w", head.Devices, err)
	}
	return c.checkDevices()
}

// checkDevices: one argument list (absent means none) and one expected
// value per device.
func (c *Case) checkDevices() error {
	if c.DeviceArgs == nil {
		c.DeviceArgs = make([][]Value, c.Devices)
	}
	if len(c.DeviceArgs) != c.Devices {
		return fmt.Errorf("%d-device case has %d argument lists", c.Devices, len(c.DeviceArgs))
	}
	if len(c.DeviceExpected) != c.Devices {
		return fmt.Errorf("%d-device case has %d expected values", c.Devices, len(c.DeviceExpected))
	}
	return nil
}

// errNoDevices is returned for a multi-device case on a backend that runs
// one device only.
var errNoDevices = errors.New("the backend does not implement conformance.DeviceBackend (RunDevices)")

// runDevices runs a multi-device case whose module is parsed, verified and
// prepared, and compares every device's result.
func (r *Runner) runDevices(c *Case, m *hlo.Module) error {
	db, ok := r.Backend.(DeviceBackend)
	if !ok {
		return fmt.Errorf("%d-device case on %s: %w", c.Devices, r.Backend.Name(), errNoDevices)
	}
	if want := max(m.ReplicaCount, 1) * max(m.NumPartitions, 1); want != int64(c.Devices) {
		return fmt.Errorf("the module's replica_count × num_partitions is %d, the case has %d devices", want, c.Devices)
	}
	args := make([][]*hlo.Literal, c.Devices)
	for d, vs := range c.DeviceArgs {
		args[d] = make([]*hlo.Literal, len(vs))
		for i, v := range vs {
			l, err := v.Literal()
			if err != nil {
				return fmt.Errorf("device %d: argument %d: %w", d, i, err)
			}
			args[d][i] = l
		}
	}
	wants := make([]*hlo.Literal, c.Devices)
	for d, v := range c.DeviceExpected {
		l, err := v.Literal()
		if err != nil {
			return fmt.Errorf("device %d: expected value: %w", d, err)
		}
		wants[d] = l
	}
	got, err := db.RunDevices(m, args)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if len(got) != c.Devices {
		return fmt.Errorf("run: the backend returned %d results for %d devices", len(got), c.Devices)
	}
	var tol Tolerance
	if c.Tolerance != nil {
		tol = *c.Tolerance
	}
	for d := range wants {
		if got[d] == nil {
			return fmt.Errorf("device %d: no result", d)
		}
		if err := Compare(got[d], wants[d], tol); err != nil {
			return fmt.Errorf("device %d: %w", d, err)
		}
	}
	return nil
}
