package axle

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/axle-ml/axle/collective"
	"github.com/axle-ml/axle/hlo"
)

// Devices: a client has ClientOptions.Devices CPU devices in this
// process, or a cluster's devices across processes. A module declaring
// replica_count R and num_partitions P runs as R×P programs, one per
// device of XLA's default assignment (replica r of partition p on device
// p·R + r), started together by ExecuteDevices; their collectives meet
// through the client's transport (collective.Local in one process, the
// cluster's between processes).

// makeDevices builds the client's devices and transport.
func (c *Client) makeDevices(opts ClientOptions, threads int) error {
	n := opts.Devices
	if n < 0 {
		return fmt.Errorf("axle: negative device count %d", n)
	}
	if opts.Cluster == nil {
		n = max(n, 1)
		share := max(threads/n, 1)
		for i := range n {
			c.devices = append(c.devices, &Device{ID: i, Kind: "cpu", Threads: share, Local: true})
		}
		c.net = collective.NewLocal()
		return nil
	}
	local := opts.Cluster.LocalDevices()
	if n != 0 && n != len(local) {
		return fmt.Errorf("axle: ClientOptions.Devices is %d but the cluster gives this process %d devices", n, len(local))
	}
	if len(local) == 0 {
		return fmt.Errorf("axle: the cluster gives this process no devices")
	}
	share := max(threads/len(local), 1)
	for i := range opts.Cluster.Devices() {
		c.devices = append(c.devices, &Device{ID: i, Kind: "cpu", Threads: share, Process: opts.Cluster.ProcessOf(i)})
	}
	for _, d := range local {
		if d < 0 || d >= len(c.devices) {
			return fmt.Errorf("axle: the cluster's local device %d is outside its %d devices", d, len(c.devices))
		}
		c.devices[d].Local = true
	}
	c.net, c.cluster = opts.Cluster, opts.Cluster
	return nil
}

// AddressableDevices are the devices this process runs, by id.
func (c *Client) AddressableDevices() []*Device {
	if c == nil {
		return nil
	}
	var out []*Device
	for _, d := range c.devices {
		if d.Local {
			out = append(out, d)
		}
	}
	return out
}

// place assigns a module's programs to the client's devices: replica r
// of partition p to device p·R + r (XLA's default assignment). fp is the
// module's fingerprint, the compile cache's key (hashing a model's
// weights twice cost MiniLM's compile half its time).
func (x *Executable) place(m *hlo.Module, fp [sha256.Size]byte) error {
	x.program = binary.LittleEndian.Uint64(fp[:8])
	r, p := max(int(m.ReplicaCount), 1), max(int(m.NumPartitions), 1)
	c := x.client
	if r*p == 1 {
		x.local = c.devices[:1]
		return nil
	}
	if r*p > len(c.devices) {
		return fmt.Errorf("axle: %s needs %d devices (replica_count %d × num_partitions %d) but the client has %d: set ClientOptions.Devices (axle run --devices %d)",
			m.Name, r*p, r, p, len(c.devices), r*p)
	}
	a, err := collective.DefaultAssignment(r, p)
	if err != nil {
		return fmt.Errorf("axle: %w", err)
	}
	x.assign = a
	ids := a.Devices()
	slices.Sort(ids)
	for _, d := range ids {
		if c.devices[d].Local {
			x.local = append(x.local, c.devices[d])
		}
	}
	if len(x.local) == 0 {
		return fmt.Errorf("axle: %s runs on devices %v, none of them this process's", m.Name, ids)
	}
	return nil
}

// threads is the threads one program of the executable may use: a
// device's share when it runs on several.
func (x *Executable) threads() int {
	if x.assign == nil {
		return x.client.threads
	}
	return x.local[0].Threads
}

// Devices are the devices this process runs the executable's programs
// on, by id: ExecuteDevices takes one argument list per device, in this
// order.
func (x *Executable) Devices() []*Device {
	if x == nil {
		return nil
	}
	return x.local
}

// needsDevices is the error of a single-device call on a multi-device
// executable.
func (x *Executable) needsDevices() error {
	return fmt.Errorf("axle: %s runs on %d devices (%d replicas × %d partitions): call ExecuteDevices with one argument list per device",
		x.entry, x.assign.Size(), x.assign.Replicas, x.assign.Partitions)
}

// ExecuteDevices runs the executable's programs on its devices together,
// one per device of x.Devices() (args[i] are device i's arguments), and
// returns each device's results as Execute would. A module on one device
// runs as Execute. When any device fails, the launch is cancelled on
// every other device (a collective waiting for the failed one stops),
// every result is released, and the error names the device that failed
// first. Buffers from any device of the client may be passed to any
// device: a CPU device's memory is the host's.
func (x *Executable) ExecuteDevices(ctx context.Context, opts ExecuteOptions, args [][]*Buffer) ([][]*Buffer, error) {
	if err := x.enter(); err != nil {
		return nil, err
	}
	x.leave()
	if len(args) != len(x.local) {
		return nil, fmt.Errorf("axle: %s runs on %d devices of this process but got %d argument lists", x.entry, len(x.local), len(args))
	}
	if x.assign == nil {
		out, err := x.ExecuteContext(ctx, opts, args[0]...)
		if err != nil {
			return nil, err
		}
		return [][]*Buffer{out}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	launch := x.client.launches.Add(1)
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([][]*Buffer, len(x.local))
	errs := make([]error, len(x.local))
	var wg sync.WaitGroup
	for i, d := range x.local {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = x.executeDevice(lctx, opts, args[i], d, launch)
			for _, b := range results[i] {
				b.dev = d
			}
			if errs[i] != nil {
				cancel(fmt.Errorf("device %d failed: %w", d.ID, errs[i]))
			}
		}()
	}
	wg.Wait()
	if err := firstFailure(lctx, errs); err != nil {
		for _, rs := range results {
			for _, b := range rs {
				b.Release()
			}
		}
		return nil, err
	}
	return results, nil
}

// firstFailure is the error that cancelled the launch (the first
// device's to fail, not the others' reports of the cancellation), or the
// caller's context's.
func firstFailure(lctx context.Context, errs []error) error {
	for _, err := range errs {
		if err != nil {
			if cause := context.Cause(lctx); cause != nil {
				return fmt.Errorf("axle: %w", cause)
			}
			return err
		}
	}
	return nil
}

// executeDevice runs device d's program of one launch.
func (x *Executable) executeDevice(ctx context.Context, opts ExecuteOptions, args []*Buffer, d *Device, launch uint64) ([]*Buffer, error) {
	r, p, _ := x.assign.Logical(d.ID)
	part := &collective.Participant{Device: d.ID, Replica: r, Partition: p, Assign: x.assign, Net: x.client.net,
		Ctx: ctx, Program: x.program, Launch: launch}
	if x.client.cluster != nil {
		if err := x.handshake(part, args); err != nil {
			return nil, err
		}
	}
	stop := new(atomic.Bool)
	unregister := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer unregister()
	return x.execute(stop, opts, args, part)
}

// handshake checks, before a launch spanning processes, that every
// device runs the same program on arguments of the same shapes, so that
// a mismatch fails at once, naming the device, rather than leaving
// collectives waiting for messages that never come.
func (x *Executable) handshake(part *collective.Participant, args []*Buffer) error {
	payload := binary.LittleEndian.AppendUint64(nil, x.program)
	for _, b := range args {
		if b != nil {
			payload = append(payload, b.Shape().String()...)
		}
		payload = append(payload, ';')
	}
	key := collective.Key{Launch: part.Launch, Op: "axle.launch"}
	devices := x.assign.Devices()
	got, err := collective.Handshake(part.Ctx, part.Net, part.Device, devices, key, payload)
	if err != nil {
		return err
	}
	return collective.SameEverywhere(part.Device, devices, got, func(b []byte) string {
		if len(b) < 8 {
			return "nothing"
		}
		return fmt.Sprintf("program %016x with arguments (%s)", binary.LittleEndian.Uint64(b), strings.TrimSuffix(string(b[8:]), ";"))
	})
}

// Assignment is how many replicas and partitions the executable runs as
// (1, 1 for a single device).
func (x *Executable) Assignment() (replicas, partitions int) {
	if x == nil || x.assign == nil {
		return 1, 1
	}
	return x.assign.Replicas, x.assign.Partitions
}

// BufferOn is BufferFromLiteral placing the buffer on device d, one of
// this process's. (A CPU device's memory is the host's: any device's
// buffer may be passed to any device; the placement is what
// Buffer.Device reports.)
func (c *Client) BufferOn(d *Device, l *hlo.Literal) (*Buffer, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if d == nil || d.ID < 0 || d.ID >= len(c.devices) || c.devices[d.ID] != d || !d.Local {
		return nil, fmt.Errorf("axle: device %v is not one of this client's local devices", d)
	}
	b, err := c.BufferFromLiteral(l)
	if err != nil {
		return nil, err
	}
	b.dev = d
	return b, nil
}
