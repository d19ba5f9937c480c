//go:build linux && amd64 && !purego

package jit

import (
	"math"
	"slices"
)

// The constant pool: a vector's worth of copies of each constant the
// code reads, most used first (generate's second pass), so that most
// reads take a one-byte displacement; wide code keeps the first few in
// registers.

// poolBias is how far past the pool's start RDX points, so that one-byte
// displacements (-128 to 127) reach its first eight constants.
const poolBias = 128

// copies is how many copies of each constant the pool holds.
func (g *gen) copies() int {
	if g.wideProg {
		return 16
	}
	return 8
}

// byUse lists the constants of the pool, most used first (ties: in the
// order they were first used).
func (g *gen) byUse() []uint32 {
	order := make([]uint32, 0, len(g.pool)/g.copies())
	for k := 0; k < len(g.pool); k += g.copies() {
		order = append(order, g.pool[k])
	}
	slices.SortStableFunc(order, func(x, y uint32) int { return g.uses[y] - g.uses[x] })
	return order
}

// constant returns a vector of copies of bits: its register, if wide
// code keeps it in one, or its address in the pool.
func (g *gen) constant(bits uint32) rm {
	g.uses[bits]++
	m := g.constMem(bits)
	if g.wide && int(g.at[bits])/(4*g.copies()) < g.pin {
		v, ok := g.pinned[bits]
		if !ok {
			v = g.nregs
			g.nregs++
			g.pinned[bits] = v
		}
		return ymm(v)
	}
	return at(m)
}

// constMem returns the pool address of a vector of copies of bits.
func (g *gen) constMem(bits uint32) mem {
	off, ok := g.at[bits]
	if !ok {
		off = int32(4 * len(g.pool))
		for range g.copies() {
			g.pool = append(g.pool, bits)
		}
		g.at[bits] = off
	}
	return mem{base: rdx, index: -1, disp: off - poolBias}
}

func (g *gen) f32(v float32) rm { return g.constant(math.Float32bits(v)) }

// setF32 sets register r to copies of v.
func (g *gen) setF32(r int, v float32) {
	if c := g.f32(v); c.isMem {
		g.a.load(r, c.m)
	} else {
		g.a.mov(r, c.reg)
	}
}
