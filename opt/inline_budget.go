package opt

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// minInlineBudget is the floor of the call inliner's budget, in
// instructions. The budget is max(4 × the module's live instructions when
// the pass starts, minInlineBudget): room for every call of an ordinary
// module (JAX's nested jit functions, a layer called once per layer:
// inlining them adds at most the module's size again and again for a few
// levels), while a call graph that shares callees along many levels (each
// calling the next twice: 2^levels copies) stops where the copies would
// hold tens of thousands of instructions, which the later passes and the
// backend handle in well under a second, instead of running out of
// memory. The floor lets small modules with several call levels inline
// fully.
const minInlineBudget = 20000

// inlineBudget tracks the module's live size (the instructions of the
// computations the entry still reaches) while calls are inlined, and
// admits a call only if the copy keeps it within the limit. A module-wide
// bound rather than one per caller: per caller, every computation of a
// long chain could grow to the limit.
type inlineBudget struct {
	limit, live int
	entry       *hlo.Computation
	// refs counts the references to each computation from live ones
	// (calls and every other called-computation attribute): a callee whose
	// last call is inlined dies, and its instructions leave the live size.
	refs map[*hlo.Computation]int
}

func newInlineBudget(m *hlo.Module, live []*hlo.Computation, floor int) *inlineBudget {
	b := &inlineBudget{entry: m.Entry, refs: map[*hlo.Computation]int{}}
	for _, c := range live {
		b.live += len(c.Instructions)
		b.addRefs(c)
	}
	b.limit = max(4*b.live, floor)
	return b
}

// addRefs counts the references c's instructions make (a copy of them
// makes as many).
func (b *inlineBudget) addRefs(c *hlo.Computation) {
	for _, in := range c.Instructions {
		for _, cc := range in.CalledComputations() {
			b.refs[cc]++
		}
	}
}

// growth is how many instructions inlining one call of callee adds: its
// body but the parameters, less the call.
func growth(callee *hlo.Computation) int {
	n := len(callee.Instructions) - 1
	for _, in := range callee.Instructions {
		if in.Opcode == hlo.OpParameter {
			n--
		}
	}
	return n
}

// admits reports whether a call of callee may be inlined. The only
// reference to a computation always may: the copy replaces the callee.
func (b *inlineBudget) admits(callee *hlo.Computation) bool {
	if b.refs[callee] == 1 && callee != b.entry {
		return true
	}
	return b.live+growth(callee) <= b.limit
}

// inlined records that a call of callee was replaced by a copy of its body.
func (b *inlineBudget) inlined(callee *hlo.Computation) {
	b.live += growth(callee)
	b.addRefs(callee)
	b.release(callee)
}

// release drops one reference to c; the last one takes c, and the
// references it makes, out of the live module.
func (b *inlineBudget) release(c *hlo.Computation) {
	b.refs[c]--
	if b.refs[c] > 0 || c == b.entry {
		return
	}
	b.live -= len(c.Instructions)
	for _, in := range c.Instructions {
		for _, cc := range in.CalledComputations() {
			b.release(cc)
		}
	}
}

// inlineable reports whether call may be inlined as far as its frontend
// attributes say: XLA's CallInliner inlines a call with an "inlineable"
// attribute only if it is "true".
func inlineable(call *hlo.Instruction) bool {
	raw, ok := call.Attr("frontend_attributes")
	if !ok {
		return true
	}
	text, _ := raw.(hlo.Raw)
	for _, e := range frontendEntries(string(text)) {
		if e.key == "inlineable" {
			v, err := strconv.Unquote(e.value)
			return err == nil && v == "true"
		}
	}
	return true
}

// markNotInlineable sets call's frontend attribute inlineable="false",
// keeping the others.
func markNotInlineable(call *hlo.Instruction) {
	var entries []frontendEntry
	if raw, ok := call.Attr("frontend_attributes"); ok {
		text, _ := raw.(hlo.Raw)
		entries = frontendEntries(string(text))
	}
	set := false
	for i := range entries {
		if entries[i].key == "inlineable" {
			entries[i].value, set = `"false"`, true
		}
	}
	if !set {
		entries = append(entries, frontendEntry{"inlineable", `"false"`})
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.key + "=" + e.value
	}
	call.SetAttr("frontend_attributes", hlo.Raw("{"+strings.Join(parts, ",")+"}"))
}

// frontendEntry is one key=value of a frontend_attributes map, the value
// as written (quoted, or a braced MLIR attribute).
type frontendEntry struct{ key, value string }

// frontendEntries splits a frontend_attributes map, {k="v",k2="v2"}, at
// the commas outside quotes and braces.
func frontendEntries(text string) []frontendEntry {
	text = strings.TrimSpace(text)
	text = strings.TrimSuffix(strings.TrimPrefix(text, "{"), "}")
	var out []frontendEntry
	add := func(s string) {
		if k, v, ok := strings.Cut(s, "="); ok {
			out = append(out, frontendEntry{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(text); i++ {
		switch ch := text[i]; {
		case quoted && ch == '\\':
			i++
		case ch == '"':
			quoted = !quoted
		case quoted:
		case ch == '{':
			depth++
		case ch == '}':
			depth--
		case ch == ',' && depth == 0:
			add(text[start:i])
			start = i + 1
		}
	}
	add(text[start:])
	return out
}
