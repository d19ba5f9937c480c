package cpu

import (
	"testing"

	"github.com/axle-ml/axle/backend/cpu/tile"
)

// Index ops over fusion inputs fuse and read through composed maps; each
// module is one tile fusion whose result equals the evaluator's exactly
// (no op here rounds differently).
func TestFusedIndexMaps(t *testing.T) {
	cases := map[string]string{
		"transpose-reverse": `HloModule m
ENTRY e {
  x = f32[37,53] parameter(0)
  a = f32[53,37] transpose(x), dimensions={1,0}
  b = f32[53,37] reverse(a), dimensions={0,1}
  ROOT c = f32[53,37] add(a, b)
}`,
		"slice-of-transpose": `HloModule m
ENTRY e {
  x = f32[40,30,7] parameter(0)
  t = f32[7,40,30] transpose(x), dimensions={2,0,1}
  s = f32[3,13,10] slice(t), slice={[1:7:2], [2:40:3], [5:25:2]}
  y = f32[3,13,10] parameter(1)
  ROOT c = f32[3,13,10] multiply(s, y)
}`,
		"reshape-broadcast": `HloModule m
ENTRY e {
  x = bf16[6,4] parameter(0)
  r = bf16[24] reshape(x)
  b = bf16[5,24] broadcast(r), dimensions={1}
  y = bf16[5,24] parameter(1)
  ROOT c = bf16[5,24] subtract(b, y)
}`,
		"reshape-of-slice-is-not-affine": `HloModule m
ENTRY e {
  x = f32[8,8] parameter(0)
  s = f32[4,8] slice(x), slice={[2:6], [0:8]}
  r = f32[32] reshape(s)
  y = f32[32] parameter(1)
  ROOT c = f32[32] maximum(r, y)
}`,
		// Broadcasts along outer dimensions repeat with a period that tiles
		// straddle (37 does not divide 512); a row broadcast makes short runs.
		"periodic-bias": `HloModule m
ENTRY e {
  x = f32[37] parameter(0)
  b = f32[100,37] broadcast(x), dimensions={1}
  r = f32[100] parameter(1)
  c = f32[100,37] broadcast(r), dimensions={0}
  y = f32[100,37] parameter(2)
  s = f32[100,37] add(b, y)
  ROOT d = f32[100,37] subtract(s, c)
}`,
		"periodic-transposed-block": `HloModule m
ENTRY e {
  x = f32[5,3] parameter(0)
  t = f32[3,5] transpose(x), dimensions={1,0}
  b = f32[41,3,5] broadcast(t), dimensions={1,2}
  y = f32[41,3,5] parameter(1)
  ROOT c = f32[41,3,5] multiply(b, y)
}`,
		"square-transpose-not-in-place": `HloModule m
ENTRY e {
  x = f32[64,64] parameter(0)
  n = f32[64,64] negate(x)
  t = f32[64,64] transpose(n), dimensions={1,0}
  e = f32[64,64] multiply(n, n)
  ROOT c = f32[64,64] add(t, e)
}`,
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			// The tile program's gathers, and the same gathers feeding
			// generated code.
			for _, how := range []string{"tile-fusion", "jit-fusion"} {
				saved := tile.SetGeneratedCode(how == "jit-fusion")
				m, x := compileText(t, text, Options{NoOptimize: true, Poison: true})
				tile.SetGeneratedCode(saved)
				// (bf16 fusions keep their tile programs either way.)
				if x.Lowering["tile-fusion"]+x.Lowering["jit-fusion"] == 0 || how == "tile-fusion" && x.Lowering["jit-fusion"] > 0 {
					t.Fatalf("%s: lowering %v", how, x.Lowering)
				}
				checkAgainstEvaluator(t, m, x, 2)
			}
		})
	}
}
