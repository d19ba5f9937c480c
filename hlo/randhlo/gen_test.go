package randhlo

import (
	"testing"

	"github.com/axle-ml/axle/eval"
)

// Generated modules parse, verify and evaluate, and the same seed gives
// the same text.
func TestModulesAreValid(t *testing.T) {
	for seed := range uint64(200) {
		m, err := Module(seed, Options{Instructions: 16})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eval.Run(m, eval.RandomArguments(m, seed)...); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, Text(seed, Options{Instructions: 16}))
		}
		if a, b := Text(seed, Options{}), Text(seed, Options{}); a != b {
			t.Fatalf("seed %d: not deterministic", seed)
		}
	}
}
