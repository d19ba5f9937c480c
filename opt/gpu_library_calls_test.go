package opt_test

import (
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/opt"
)

// TestGPULibraryCallsText: a DEFAULT cuBLAS GEMM becomes the dot its
// config's dimension numbers describe (alpha 1: no scaling), and its
// workspace a broadcast zero; other custom calls are left alone.
func TestGPULibraryCallsText(t *testing.T) {
	const in = `HloModule g

ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  g = (f32[2,4]{1,0}, s8[8]{0}) custom-call(a, b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
  r = f32[2,4]{1,0} get-tuple-element(g), index=0
  ROOT other = f32[2,4]{1,0} custom-call(r), custom_call_target="my_kernel"
}
`
	m, err := hlotext.Parse(in, hlotext.Options{File: "g.hlo"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := opt.GPULibraryCalls.Run(m)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	got := hlotext.Print(m, hlotext.Short)
	for _, want := range []string{
		"dot = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
		"broadcast = s8[8]{0} broadcast(constant), dimensions={}",
		"tuple = (f32[2,4]{1,0}, s8[8]{0}) tuple(dot, broadcast)",
		`ROOT other = f32[2,4]{1,0} custom-call(r), custom_call_target="my_kernel"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "__cublas") {
		t.Errorf("a cuBLAS call is left:\n%s", got)
	}
	again, err := opt.GPULibraryCalls.Run(m)
	if err != nil || again {
		t.Errorf("second run: changed %v, err %v", again, err)
	}
}

// TestStandardRewritesGPUCalls: the standard pipeline starts with the
// rewrite, so `axle opt` output has no GPU library calls.
func TestStandardRewritesGPUCalls(t *testing.T) {
	p := opt.Standard()
	if p.Passes[0].Name() != "gpu-library-calls" {
		t.Fatalf("first pass is %s", p.Passes[0].Name())
	}
}
