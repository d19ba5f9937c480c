package axle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/axle-ml/axle"
)

// chainText is depth+1 computations, c0 negating and each c(k) computing
// f(x) + f(f(x)) with f = c(k-1): 2^depth calls when run, each
// computation called twice by the next (Axle issue 43's module at 30).
func chainText(depth int) string {
	var b strings.Builder
	b.WriteString("HloModule chain\n\nc0 {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n")
	for k := 1; k <= depth; k++ {
		fmt.Fprintf(&b, "\nc%d {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c%d\n", k, k-1)
		fmt.Fprintf(&b, "  b = f32[] call(a), to_apply=c%d\n  ROOT s = f32[] add(a, b)\n}\n", k-1)
	}
	fmt.Fprintf(&b, "\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c%d\n}\n", depth)
	return b.String()
}

// At depth 30 inlining everything would take 2^30 copies: compiling for
// the cpu backend keeps calls (within the inliner's budget) and finishes;
// running takes 2^30 calls, which a 100 ms deadline stops.
func TestCallChainDepth30CompilesAndCancels(t *testing.T) {
	c := newClient(t, "cpu")
	t0 := time.Now()
	x, err := c.CompileTextContext(context.Background(), chainText(30), axle.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compiled in %v: %v", time.Since(t0), x.Lowering())
	if x.Lowering()["call"] == 0 {
		t.Fatalf("lowering %v: want the calls the budget kept", x.Lowering())
	}
	arg, err := axle.BufferFromScalar(c, float32(1.5))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = x.ExecuteContext(ctx, axle.ExecuteOptions{}, arg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want %v", err, context.DeadlineExceeded)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v, want soon after the 100 ms deadline", d)
	}
}
