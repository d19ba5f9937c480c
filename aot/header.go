package aot

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// The header is written field by field, as hlobin writes modules: JSON
// cost a tenth of a millisecond on its first use in a process (its
// reflection caches) and 150 KB of binary, both paid by every command.

// marshal encodes h; map entries in sorted order, so that a plan's bytes
// depend only on what it says.
func (h *Header) marshal() []byte {
	var w writer
	w.str(h.Module)
	w.str(h.Entry)
	w.strs(h.Params)
	keys := sortedKeys(h.Plan.Lowerings)
	w.uint(len(keys))
	for _, k := range keys {
		w.str(k)
		w.str(h.Plan.Lowerings[k])
	}
	keys = sortedKeys(h.Plan.Schedules)
	w.uint(len(keys))
	for _, k := range keys {
		w.str(k)
		w.strs(h.Plan.Schedules[k])
	}
	w.str(string(h.ArgSource))
	w.uint(int(h.Seed >> 32))
	w.uint(int(h.Seed & 0xffffffff))
	w.str(h.Host)
	w.strs(h.Features)
	return w
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type writer []byte

func (w *writer) uint(n int) { *w = binary.AppendUvarint(*w, uint64(n)) }

func (w *writer) str(s string) {
	w.uint(len(s))
	*w = append(*w, s...)
}

func (w *writer) strs(ss []string) {
	w.uint(len(ss))
	for _, s := range ss {
		w.str(s)
	}
}

// unmarshalHeader decodes a header, checking every length against the
// bytes left.
func unmarshalHeader(b []byte) (Header, error) {
	r := reader{b: b}
	h := Header{Module: r.str(), Entry: r.str(), Params: r.strs()}
	h.Plan.Lowerings = map[string]string{}
	for range r.count() {
		k := r.str()
		h.Plan.Lowerings[k] = r.str()
	}
	h.Plan.Schedules = map[string][]string{}
	for range r.count() {
		k := r.str()
		h.Plan.Schedules[k] = r.strs()
	}
	if src := r.str(); src != "" {
		h.ArgSource = []byte(src)
	}
	h.Seed = uint64(r.uvarint())<<32 | uint64(r.uvarint())
	h.Host, h.Features = r.str(), r.strs()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the header", len(r.b))
	}
	return h, r.err
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<32 { // lengths and the seed's halves: 32 bits
		r.fail("a truncated or oversized number")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// count is a number of entries, each at least one byte.
func (r *reader) count() int {
	n := r.uvarint()
	if n > len(r.b) {
		r.fail("a count of %d with %d bytes left", n, len(r.b))
		return 0
	}
	return n
}

func (r *reader) str() string {
	n := r.count()
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return slices.Clip(out)
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
	r.b = nil
}
