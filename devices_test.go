package axle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
)

func devicesClient(t *testing.T, backend string, n int) *axle.Client {
	t.Helper()
	c, err := axle.NewClient(axle.ClientOptions{Backend: backend, Devices: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// allReduceModule sums a vector over every replica and adds the
// replica's id times 100, so each device's result tells the sum and that
// the device ran its own replica.
func allReduceModule(n int) string {
	return fmt.Sprintf(`HloModule ar, replica_count=%d

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[3] parameter(0)
  ar = f32[3] all-reduce(p), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  f = f32[] convert(id)
  h = f32[] constant(100)
  m = f32[] multiply(f, h)
  b = f32[3] broadcast(m), dimensions={}
  ROOT r = f32[3] add(ar, b)
}
`, n)
}

// Device d's input is {d, 2d, 3d+1}: the all-reduce over n devices is
// {Σd, 2Σd, 3Σd+n} with Σd = n(n-1)/2 (worked by hand).
func TestExecuteDevicesAllReduce(t *testing.T) {
	for _, backend := range []string{"interp", "cpu"} {
		for _, n := range []int{2, 4, 8} {
			t.Run(fmt.Sprintf("%s/%d", backend, n), func(t *testing.T) {
				c := devicesClient(t, backend, n)
				x, err := c.CompileText(allReduceModule(n), axle.CompileOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(x.Devices()) != n {
					t.Fatalf("%d devices, want %d", len(x.Devices()), n)
				}
				args := make([][]*axle.Buffer, n)
				for d := range n {
					b, err := axle.BufferFromSlice(c, []float32{float32(d), float32(2 * d), float32(3*d + 1)}, 3)
					if err != nil {
						t.Fatal(err)
					}
					args[d] = []*axle.Buffer{b}
				}
				outs, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
				if err != nil {
					t.Fatal(err)
				}
				s := float32(n * (n - 1) / 2)
				for d := range n {
					got, err := axle.ToSlice[float32](outs[d][0])
					if err != nil {
						t.Fatal(err)
					}
					off := float32(100 * d)
					want := []float32{s + off, 2*s + off, 3*s + float32(n) + off}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("device %d: got %v, want %v", d, got, want)
					}
				}
			})
		}
	}
}

// A device given a bad argument fails; the others, waiting in the
// all-reduce for it, are cancelled, and the error names the device.
func TestExecuteDevicesOneFails(t *testing.T) {
	for _, backend := range []string{"interp", "cpu"} {
		c := devicesClient(t, backend, 4)
		x, err := c.CompileText(allReduceModule(4), axle.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		args := make([][]*axle.Buffer, 4)
		for d := range 4 {
			n := 3
			if d == 2 {
				n = 4
			}
			b, err := axle.BufferFromSlice(c, make([]float32, n), int64(n))
			if err != nil {
				t.Fatal(err)
			}
			args[d] = []*axle.Buffer{b}
		}
		done := make(chan error, 1)
		go func() {
			_, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "device 2") {
				t.Fatalf("%s: error %v, want one naming device 2", backend, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the launch hangs after device 2 failed", backend)
		}
		if _, err := x.Execute(args[0]...); err == nil || !strings.Contains(err.Error(), "ExecuteDevices") {
			t.Errorf("%s: Execute on a 4-device executable: %v, want an error pointing at ExecuteDevices", backend, err)
		}
	}
}

func TestCompileNeedsDevices(t *testing.T) {
	c := devicesClient(t, "cpu", 2)
	_, err := c.CompileText(allReduceModule(4), axle.CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "needs 4 devices") {
		t.Fatalf("got %v, want an error saying the module needs 4 devices", err)
	}
}

// Results live on the device that computed them; BufferOn places a
// buffer, and refuses another client's device.
func TestBufferDevices(t *testing.T) {
	c := devicesClient(t, "cpu", 2)
	x, err := c.CompileText(allReduceModule(2), axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lit, _ := hlo.LiteralFromSlice([]float32{1, 2, 3}, 3)
	var args [][]*axle.Buffer
	for _, d := range x.Devices() {
		b, err := c.BufferOn(d, lit)
		if err != nil {
			t.Fatal(err)
		}
		if b.Device() != d {
			t.Fatalf("BufferOn(%v) is on %v", d, b.Device())
		}
		args = append(args, []*axle.Buffer{b})
	}
	outs, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range x.Devices() {
		if outs[i][0].Device() != d {
			t.Errorf("device %v's result is on %v", d, outs[i][0].Device())
		}
	}
	other := devicesClient(t, "cpu", 2)
	if _, err := c.BufferOn(other.Devices()[1], lit); err == nil {
		t.Error("BufferOn took another client's device")
	}
}

// Bad argument lists are errors naming what is wrong, never a panic or
// a hang, and leave the executable usable.
func TestExecuteDevicesBadArguments(t *testing.T) {
	c := devicesClient(t, "cpu", 2)
	x, err := c.CompileText(allReduceModule(2), axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := func() []*axle.Buffer {
		b, err := axle.BufferFromSlice(c, []float32{1, 2, 3}, 3)
		if err != nil {
			t.Fatal(err)
		}
		return []*axle.Buffer{b}
	}
	released := good()
	released[0].Release()
	for name, args := range map[string][][]*axle.Buffer{
		"no lists":       nil,
		"one list":       {good()},
		"three lists":    {good(), good(), good()},
		"nil list":       {good(), nil},
		"nil buffer":     {good(), {nil}},
		"released":       {good(), released},
		"extra argument": {good(), append(good(), good()...)},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: no error", name)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: hangs", name)
		}
	}
	if _, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, [][]*axle.Buffer{good(), good()}); err != nil {
		t.Fatalf("after bad calls: %v", err)
	}
}

// Cancelling the context stops every device of a launch, in a loop of
// all-reduces, and the call returns the context's error.
func TestExecuteDevicesCancel(t *testing.T) {
	const text = `HloModule loop, replica_count=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2000000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[64] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[64] all-reduce(v), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[64]) tuple(j, r)
}

ENTRY main {
  x = f32[64] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[64]) tuple(z, x)
  w = (s32[], f32[64]) while(t), condition=cond, body=body
  ROOT v = f32[64] get-tuple-element(w), index=1
}
`
	for _, backend := range []string{"interp", "cpu"} {
		c := devicesClient(t, backend, 4)
		x, err := c.CompileText(text, axle.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		args := make([][]*axle.Buffer, 4)
		for d := range args {
			b, err := axle.BufferFromSlice(c, make([]float32, 64), 64)
			if err != nil {
				t.Fatal(err)
			}
			args[d] = []*axle.Buffer{b}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := x.ExecuteDevices(ctx, axle.ExecuteOptions{}, args)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v, want the context's deadline error", backend, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: a cancelled launch keeps running", backend)
		}
		cancel()
	}
}
