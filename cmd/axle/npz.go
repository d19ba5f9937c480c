package main

import (
	"fmt"

	"github.com/axle-ml/axle/aot"
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/npy"
)

// writeOutputs writes the results of a run to a .npz archive, one array
// per leaf of the (untupled) results: output_0, output_1, ...
func writeOutputs(path string, results []*hlo.Literal) error {
	var arrays []npy.Array
	for _, r := range results {
		for _, l := range aot.Leaves(r) {
			arrays = append(arrays, npy.Array{Name: fmt.Sprintf("output_%d", len(arrays)), Lit: l})
		}
	}
	return npy.WriteNPZ(path, arrays)
}
