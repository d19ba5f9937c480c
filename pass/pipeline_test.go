package pass_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/pass"
)

const small = `HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT a = f32[4] add(n, p)
}`

func parse(t *testing.T, text string) *hlo.Module {
	t.Helper()
	m, err := hlotext.Parse(text, hlotext.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// negToAbs rewrites the first negate into abs, once: a pass that changes
// the module on its first run only.
func negToAbs(m *hlo.Module) (bool, error) {
	for _, in := range m.Entry.Instructions {
		if in.Opcode == hlo.OpNegate {
			in.Opcode = hlo.OpAbs
			return true, nil
		}
	}
	return false, nil
}

func TestFixedPointAndOrderAndSelection(t *testing.T) {
	var log []string
	logger := func(name string) pass.Pass {
		return pass.Func(name, func(*hlo.Module) (bool, error) { log = append(log, name); return false, nil })
	}
	pl := &pass.Pipeline{Label: "p", Passes: []pass.Pass{
		logger("first"),
		&pass.Fix{Label: "fix", Passes: []pass.Pass{pass.Func("rewrite", negToAbs), logger("inner")}},
		logger("last"),
	}}
	m := parse(t, small)
	changed, err := pl.RunWith(m, pass.Options{Verify: true, CheckUnchanged: true})
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	// Round 1 changes, round 2 does not: inner runs twice.
	if got := strings.Join(log, ","); got != "first,inner,inner,last" {
		t.Fatalf("ran %s", got)
	}
	log = nil
	if _, err := pl.RunWith(parse(t, small), pass.Options{Only: []string{"fix"}, Skip: []string{"inner"}}); err != nil {
		t.Fatal(err)
	}
	if len(log) != 0 {
		t.Fatalf("Only=fix Skip=inner ran %v", log)
	}
	if _, err := pl.RunWith(m, pass.Options{Only: []string{"nosuch"}}); err == nil || !strings.Contains(err.Error(), `no pass "nosuch"`) {
		t.Fatalf("unknown pass name: err=%v", err)
	}
}

func TestOrdersAreChecked(t *testing.T) {
	noop := func(name string) pass.Pass {
		return pass.Func(name, func(*hlo.Module) (bool, error) { return false, nil })
	}
	pl := &pass.Pipeline{Label: "p", Passes: []pass.Pass{noop("b"), noop("a")},
		Orders: []pass.Order{{Before: "a", After: "b", Reason: "b needs a's output"}}}
	_, err := pl.RunWith(parse(t, small), pass.Options{})
	if err == nil || !strings.Contains(err.Error(), "b needs a's output") {
		t.Fatalf("order violation not reported: %v", err)
	}
	dup := &pass.Pipeline{Label: "p", Passes: []pass.Pass{noop("a"), noop("a")}}
	if _, err := dup.RunWith(parse(t, small), pass.Options{}); err == nil {
		t.Fatal("duplicate pass names accepted")
	}
	// A nested pipeline's orders are checked by the pipeline running it.
	inner := &pass.Pipeline{Label: "inner", Passes: []pass.Pass{noop("d"), noop("c")},
		Orders: []pass.Order{{Before: "c", After: "d", Reason: "d reads what c leaves"}}}
	outer := &pass.Pipeline{Label: "outer", Passes: []pass.Pass{noop("a"), inner}}
	if _, err := outer.RunWith(parse(t, small), pass.Options{}); err == nil || !strings.Contains(err.Error(), "d reads what c leaves") {
		t.Fatalf("nested order violation not reported: %v", err)
	}
}

// The invariant checks catch a pass that lies about changing the module,
// a pass that breaks the module, and a group that never settles.
func TestInvariantChecks(t *testing.T) {
	liar := pass.Func("liar", func(m *hlo.Module) (bool, error) { _, err := negToAbs(m); return false, err })
	_, err := (&pass.Pipeline{Label: "p", Passes: []pass.Pass{liar}}).RunWith(parse(t, small), pass.Options{CheckUnchanged: true})
	if err == nil || !strings.Contains(err.Error(), "reported no change but changed") {
		t.Fatalf("lying pass not caught: %v", err)
	}
	breaker := pass.Func("breaker", func(m *hlo.Module) (bool, error) {
		m.Entry.Root.Shape = hlo.ArrayShape(hlo.S32, 4)
		return true, nil
	})
	_, err = (&pass.Pipeline{Label: "p", Passes: []pass.Pass{breaker}}).RunWith(parse(t, small), pass.Options{Verify: true})
	var ve *hlo.VerifyError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "after pass breaker") {
		t.Fatalf("broken module not caught: %v", err)
	}
	always := pass.Func("always", func(*hlo.Module) (bool, error) { return true, nil })
	_, err = (&pass.Pipeline{Label: "p", Passes: []pass.Pass{&pass.Fix{Label: "loop", Passes: []pass.Pass{always}, MaxRounds: 3}}}).RunWith(parse(t, small), pass.Options{})
	if err == nil || !strings.Contains(err.Error(), "after 3 rounds") {
		t.Fatalf("endless group not caught: %v", err)
	}
}

func TestTimingsRecordEveryRun(t *testing.T) {
	var tm pass.Timings
	pl := &pass.Pipeline{Label: "p", Passes: []pass.Pass{&pass.Fix{Label: "fix", Passes: []pass.Pass{pass.Func("rewrite", negToAbs)}}}}
	if _, err := pl.RunWith(parse(t, small), pass.Options{Timings: &tm}); err != nil {
		t.Fatal(err)
	}
	if len(tm.Entries) != 1 || tm.Entries[0].Runs != 2 || tm.Entries[0].Changed != 1 {
		t.Fatalf("timings %+v", tm.Entries)
	}
	if !strings.Contains(tm.String(), "rewrite") {
		t.Fatalf("table:\n%s", tm.String())
	}
}
