package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const roundtripShort = "../../../shared/corpus/hlo/parser/roundtrip_short"

// raggedModule is a ragged-all-to-all on 4 replicas whose metadata agree
// across devices (random arguments would not): device d sends member j
// (d+j)%3+1 rows from row 4j, into rows from 4d of j's output.
const raggedModule = `HloModule ragged4, replica_count=4
ENTRY e {
  input = bf16[16,4] parameter(0)
  output = bf16[16,4] parameter(1)
  rid = u32[] replica-id()
  r = s32[] convert(rid)
  j = s32[4] iota(), iota_dimension=0
  four = s32[] constant(4)
  b4 = s32[4] broadcast(four), dimensions={}
  io = s32[4] multiply(j, b4)
  br = s32[4] broadcast(r), dimensions={}
  rj = s32[4] add(br, j)
  three = s32[] constant(3)
  b3 = s32[4] broadcast(three), dimensions={}
  m = s32[4] remainder(rj, b3)
  one = s32[] constant(1)
  b1 = s32[4] broadcast(one), dimensions={}
  ss = s32[4] add(m, b1)
  r4 = s32[] multiply(r, four)
  oo = s32[4] broadcast(r4), dimensions={}
  ROOT ra = bf16[16,4] ragged-all-to-all(input, output, io, ss, oo, ss), replica_groups={}
}
`

// The in-place collective-permutes of XLA's parser tests and a
// ragged-all-to-all give every device the same checksums on the
// evaluator and the CPU backend.
func TestInPlacePermuteAndRaggedBackendsAgree(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(roundtripShort, "CollectivePermute*In[Pp]lace*.hlo"))
	if len(files) == 0 {
		t.Skip("shared corpus not found")
	}
	ragged := filepath.Join(t.TempDir(), "ragged4.hlo")
	if err := os.WriteFile(ragged, []byte(raggedModule), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, ragged) {
		var sums [2][]string
		for i, backend := range []string{"interp", "cpu"} {
			out, errs, code := runAxle("run", "--backend", backend, f)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d: %s", filepath.Base(f), backend, code, errs)
			}
			for _, line := range strings.Split(out+errs, "\n") {
				if strings.HasPrefix(line, "result ") {
					sums[i] = append(sums[i], line)
				}
			}
		}
		if len(sums[0]) < 4 || !slices.Equal(sums[0], sums[1]) {
			t.Errorf("%s: interp %q, cpu %q", filepath.Base(f), sums[0], sums[1])
		}
	}
}
