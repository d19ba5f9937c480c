package hlobin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/axle-ml/axle/hlo"
)

// ErrCorrupt is what decoding bytes that are not an encoded module (or a
// damaged one) returns, wrapped with where it failed.
var ErrCorrupt = errors.New("hlobin: not an encoded module, or a damaged one")

// Decode reads a module Encode wrote. It checks the structure (every
// count against the bytes left, every reference against what it names)
// and never panics; it does not verify the module (hlo.Verify does).
func Decode(data []byte) (*hlo.Module, error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: no %s header", ErrCorrupt, magic)
	}
	d := &decoder{b: data[len(magic):]}
	m := d.module()
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the module", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

type decoder struct {
	b     []byte
	err   error
	comps []*hlo.Computation
	// fixups resolve computation references once all are read.
	fixups []func()
	chunk  []byte // the rest of the block literals are cut from (store)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a truncated number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length of items each taking at least min bytes: one the
// bytes left cannot hold is corruption (and would be a huge allocation).
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/max(min, 1)) {
		d.fail("a count of %d with %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("a truncated number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bool() bool { return d.byte() != 0 }

func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail("a truncated float")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.count(1)
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) strs() []string {
	out := make([]string, d.count(1))
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) ints() []int64 {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	if n-1 > uint64(len(d.b)) {
		d.fail("a count of %d with %d bytes left", n-1, len(d.b))
		return nil
	}
	out := make([]int64, n-1)
	for i := range out {
		out[i] = d.int()
	}
	return out
}

func (d *decoder) module() *hlo.Module {
	m := &hlo.Module{Name: d.str(), IsScheduled: d.bool(), ReplicaCount: d.int(), NumPartitions: d.int(), StackFrameIndex: d.str()}
	if d.bool() {
		m.EntryLayout = &hlo.ProgramShape{Params: d.shapes(), ParamNames: d.strs(), Result: d.shape()}
	}
	m.Attrs = d.attrs(nil)
	n := d.count(3)
	d.comps = make([]*hlo.Computation, n)
	for i := range d.comps {
		d.comps[i] = &hlo.Computation{Parent: m}
	}
	m.Computations = d.comps
	for _, c := range d.comps {
		d.computation(c)
		if d.err != nil {
			return nil
		}
	}
	m.Entry = d.comp(d.int())
	for _, f := range d.fixups {
		f()
	}
	return m
}

// comp is computation i (nil for -1).
func (d *decoder) comp(i int64) *hlo.Computation {
	if i == -1 {
		return nil
	}
	if i < 0 || i >= int64(len(d.comps)) {
		d.fail("computation %d of %d", i, len(d.comps))
		return nil
	}
	return d.comps[i]
}

func (d *decoder) computation(c *hlo.Computation) {
	c.Name, c.IsEntry, c.ExecutionThread = d.str(), d.bool(), d.str()
	ins := make([]*hlo.Instruction, d.count(4))
	for i := range ins {
		ins[i] = &hlo.Instruction{Parent: c}
	}
	c.Instructions = ins
	for _, in := range ins {
		d.instruction(in, ins)
		if d.err != nil {
			return
		}
	}
	c.Root = d.ref(ins)
	c.Params = d.refs(ins)
}

// ref is instruction i of ins (nil for -1).
func (d *decoder) ref(ins []*hlo.Instruction) *hlo.Instruction {
	i := d.int()
	if i == -1 {
		return nil
	}
	if i < 0 || i >= int64(len(ins)) {
		d.fail("instruction %d of %d", i, len(ins))
		return nil
	}
	return ins[i]
}

func (d *decoder) refs(ins []*hlo.Instruction) []*hlo.Instruction {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	out := make([]*hlo.Instruction, n)
	for i := range out {
		out[i] = d.ref(ins)
	}
	return out
}

func (d *decoder) instruction(in *hlo.Instruction, ins []*hlo.Instruction) {
	in.Name = d.str()
	op := d.uvarint()
	if op == 0 || op >= uint64(hlo.NumOpcodes()) {
		d.fail("opcode %d", op)
		return
	}
	in.Opcode = hlo.Opcode(op)
	in.Shape = d.shape()
	in.Operands = d.refs(ins)
	in.ParamNumber = d.int()
	in.ControlPredecessors = d.refs(ins)
	if d.bool() {
		in.Literal = d.literal(0)
	}
	in.Attrs = d.attrs(ins)
}
