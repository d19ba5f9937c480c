package aot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/axle-ml/axle/backend/cpu"
)

// A plan file is the magic, then three length-prefixed sections (an
// unsigned varint each): the header (header.go), the fused module (package
// hlobin), and the JIT's code book (package jit).
// The digit is the format's version: a plan written by another version
// is refused with a message saying to regenerate it, not misread.
const magic = "AXLEAOT2"

// Header is a plan's description: what the module is and what compiling
// it decided.
type Header struct {
	// Module is the module's name; Entry its entry computation's.
	Module, Entry string
	// Params are the entry parameters' names in the module as written
	// (compiling may rename them).
	Params []string
	// Plan is the lowering of each instruction and the schedules.
	Plan cpu.Plan
	// ArgSource is the state of the seeded stream (randlit.Source) after
	// the module's elided constants took their values: the command draws
	// its random arguments from it, as `axle run` does.
	ArgSource []byte
	// Seed is the seed ArgSource was made with.
	Seed uint64
	// Host says where the plan was made: CPU model and kernel level.
	Host string
	// Features are the CPU features the code book's code needs; on a CPU
	// without them the same plan runs without generated code.
	Features []string
}

// Plan is a decoded plan file.
type Plan struct {
	Header Header
	Module []byte // hlobin
	Code   []byte // the JIT's code book
}

// Marshal encodes p as a plan file.
func (p *Plan) Marshal() ([]byte, error) {
	h := p.Header.marshal()
	var b bytes.Buffer
	b.WriteString(magic)
	for _, s := range [][]byte{h, p.Module, p.Code} {
		b.Write(binary.AppendUvarint(nil, uint64(len(s))))
		b.Write(s)
	}
	return b.Bytes(), nil
}

// ErrBadPlan is what decoding a damaged plan file returns (wrapped).
var ErrBadPlan = errors.New("not an Axle plan file (or a damaged one)")

// Decode reads a plan file.
func Decode(data []byte) (*Plan, error) {
	rest, ok := bytes.CutPrefix(data, []byte(magic))
	if !ok {
		if len(data) >= len(magic) && bytes.HasPrefix(data, []byte(magic[:len(magic)-1])) {
			return nil, fmt.Errorf("aot: %w: a plan of format %s, this package reads %s: regenerate it with this version's axle aot",
				ErrBadPlan, data[:len(magic)], magic)
		}
		return nil, fmt.Errorf("aot: %w: no %s header", ErrBadPlan, magic)
	}
	var sections [3][]byte
	for i := range sections {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, fmt.Errorf("aot: %w: section %d is truncated", ErrBadPlan, i)
		}
		sections[i], rest = rest[k:k+int(n)], rest[k+int(n):]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("aot: %w: %d bytes after the last section", ErrBadPlan, len(rest))
	}
	p := &Plan{Module: sections[1], Code: sections[2]}
	h, err := unmarshalHeader(sections[0])
	if err != nil {
		return nil, fmt.Errorf("aot: %w: header: %v", ErrBadPlan, err)
	}
	p.Header = h
	return p, nil
}
