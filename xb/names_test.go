package xb

import (
	"fmt"
	"testing"

	"github.com/axle-ml/axle/hlo"
)

// Instructions that share a name get the smallest free suffix, in order,
// skipping suffixes taken by other names (a parameter named add.3 here),
// however many there are.
func TestUniqueNames(t *testing.T) {
	b := New("m")
	x := b.Param("add.3", hlo.F32, 2)
	y := x
	const n = 3000
	for range n {
		y = Add(y, x)
	}
	m, err := b.Build(y)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	want = append(want, "add.3", "add")
	for i := 1; len(want) < n+1; i++ {
		if i != 3 {
			want = append(want, fmt.Sprintf("add.%d", i))
		}
	}
	got := m.Entry.Instructions
	if len(got) != len(want) {
		t.Fatalf("%d instructions, want %d", len(got), len(want))
	}
	for i, in := range got {
		if in.Name != want[i] {
			t.Fatalf("instruction %d is %s, want %s", i, in.Name, want[i])
		}
	}
}
