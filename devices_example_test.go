package axle_test

import (
	"context"
	"fmt"
	"log"

	"github.com/axle-ml/axle"
	"github.com/axle-ml/axle/hlo"
)

// A module written for two replicas runs as one program per device: each
// device passes its own vector, and the all-reduce gives each the sum.
func ExampleExecutable_ExecuteDevices() {
	client, err := axle.NewClient(axle.ClientOptions{Backend: "cpu", Devices: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	x, err := client.CompileText(`HloModule sum, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(p), replica_groups={}, to_apply=add
}`, axle.CompileOptions{})
	if err != nil {
		log.Fatal(err)
	}
	var args [][]*axle.Buffer
	for i, d := range x.Devices() {
		v, err := hlo.LiteralFromSlice([]float32{1, 2, float32(10 * i)}, 3)
		if err != nil {
			log.Fatal(err)
		}
		b, err := client.BufferOn(d, v) // device d's argument, placed on it
		if err != nil {
			log.Fatal(err)
		}
		args = append(args, []*axle.Buffer{b})
	}
	outs, err := x.ExecuteDevices(context.Background(), axle.ExecuteOptions{}, args)
	if err != nil {
		log.Fatal(err)
	}
	for i, d := range x.Devices() {
		v, err := axle.ToSlice[float32](outs[i][0])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d, v)
	}
	// Output:
	// cpu:0 [2 4 10]
	// cpu:1 [2 4 10]
}
