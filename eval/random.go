package eval

import (
	"math/rand/v2"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/randlit"
)

// RandomLiteral, FillElidedConstants and RandomArguments are package
// randlit's (kept here for the evaluator's callers).

// RandomLiteral fills a shape with seeded values (randlit.RandomLiteral).
func RandomLiteral(s hlo.Shape, rng *rand.Rand) *hlo.Literal { return randlit.RandomLiteral(s, rng) }

// FillElidedConstants gives constants written {...} seeded random values.
func FillElidedConstants(m *hlo.Module, rng *rand.Rand) { randlit.FillElidedConstants(m, rng) }

// RandomArguments returns seeded random arguments for m's entry
// parameters (after filling its elided constants from the same stream).
func RandomArguments(m *hlo.Module, seed uint64) []*hlo.Literal {
	return randlit.RandomArguments(m, seed)
}
