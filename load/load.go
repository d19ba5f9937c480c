package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hloproto"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/stablehlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Format is the format of a module file.
type Format int

const (
	// Detect chooses the format by extension, else by content (FormatOf).
	Detect Format = iota
	// HLOText is XLA's HLO text, one or more modules (.hlo, .txt).
	HLOText
	// Proto is an HloModuleProto or XLA's dump HloProto (.pb, .hlo.pb,
	// gzipped too): one module.
	Proto
	// MLIR is StableHLO (with CHLO) in MLIR text (.mlir): one module.
	MLIR
)

// String names the format as the command's messages do.
func (f Format) String() string {
	switch f {
	case HLOText:
		return "HLO text"
	case Proto:
		return "HloModuleProto"
	case MLIR:
		return "StableHLO"
	}
	return "detect"
}

// Options configure reading a module.
type Options struct {
	// Format is the file's format; Detect (the zero value) decides by
	// name and content.
	Format Format
	// ReplicaCount, when non-zero, is the replica count of modules that
	// do not give their own.
	ReplicaCount int64
	// Entry names a StableHLO module's entry function; "" means @main,
	// else the single public function.
	Entry string
	// ArgShapes are the concrete shapes of the entry's arguments. A
	// StableHLO entry's dynamic dimensions (`?`) take their sizes from
	// them; for every format, a shape that contradicts the module's
	// parameter is an error naming the parameter. nil: the module's own.
	// There is one per entry argument, a StableHLO entry's leading
	// dimension variables included (scalars; see Signature).
	ArgShapes []hlo.Shape
	// Warn, when set, receives what the HLO text parser accepted
	// leniently (a use ahead of its definition, an unspecified custom-call
	// API version).
	Warn func(hlotext.Warning)
}

// FormatOf decides a file's format by its name's extension or, when the
// extension says nothing, by its content: HLO text is UTF-8 that says
// HloModule; MLIR text is UTF-8 that defines a func.func; anything else
// is taken for a protocol buffer.
func FormatOf(name string, data []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".hlo", ".txt":
		return HLOText
	case ".pb":
		return Proto
	case ".mlir":
		return MLIR
	}
	if utf8.Valid(data) {
		switch {
		case bytes.Contains(data, []byte("HloModule")):
			return HLOText
		case bytes.Contains(data, []byte("func.func")):
			return MLIR
		}
	}
	return Proto
}

// File reads the modules of the file at path (see Bytes).
func File(path string, opts Options) ([]*hlo.Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Bytes(path, b, opts)
}

// Bytes reads the modules of data, the content of a file called name
// (which chooses the format by its extension and prefixes error
// messages). HLO text may hold several modules; the other formats hold
// one. ArgShapes, when given, apply to a single module.
func Bytes(name string, data []byte, opts Options) ([]*hlo.Module, error) {
	f := opts.Format
	if f == Detect {
		f = FormatOf(name, data)
	}
	var mods []*hlo.Module
	switch f {
	case HLOText:
		var err error
		if mods, err = hlotext.ParseFile(string(data), hlotext.Options{File: name, ReplicaCount: opts.ReplicaCount, Warn: opts.Warn}); err != nil {
			return nil, err
		}
	case Proto, MLIR:
		m, err := readOne(f, name, data, opts)
		if err != nil {
			return nil, err
		}
		if opts.ReplicaCount != 0 && m.ReplicaCount == 1 {
			m.ReplicaCount = opts.ReplicaCount
		}
		mods = []*hlo.Module{m}
	default:
		return nil, fmt.Errorf("%s: unknown format %d", name, f)
	}
	if opts.ArgShapes != nil {
		if len(mods) != 1 {
			return nil, fmt.Errorf("%s: argument shapes given for a file of %d modules", name, len(mods))
		}
		if err := checkArgShapes(mods[0], opts.ArgShapes); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return mods, nil
}

// readOne reads a protocol buffer or a StableHLO module.
func readOne(f Format, name string, data []byte, opts Options) (*hlo.Module, error) {
	if f == Proto {
		m, err := hloproto.Read(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return m, nil
	}
	src, err := mlir.Parse(name, data)
	if err != nil {
		return nil, err
	}
	return stablehlo.Convert(src, stablehlo.Options{Entry: opts.Entry, ArgShapes: opts.ArgShapes})
}

// checkArgShapes checks that the module's entry takes arguments of the
// given shapes (element types and dimensions; layouts are the
// module's).
func checkArgShapes(m *hlo.Module, shapes []hlo.Shape) error {
	if m.Entry == nil {
		return fmt.Errorf("module %s has no entry computation", m.Name)
	}
	params := m.Entry.Params
	if len(params) != len(shapes) {
		return fmt.Errorf("module %s takes %d arguments, got %d shapes", m.Name, len(params), len(shapes))
	}
	for i, p := range params {
		if !p.Shape.Compatible(shapes[i]) {
			return fmt.Errorf("parameter %d (%s) is %s, argument shape %s", i, p.Name, p.Shape.HumanString(), shapes[i].HumanString())
		}
	}
	return nil
}

// Signature returns what the module in data takes, read without
// converting it: for StableHLO, the entry's declared argument shapes
// (`?` dimensions as hlo.Unbounded) and its dimension variables; for the
// HLO formats, the entry's parameter shapes. A caller holding concrete
// arguments matches them to it and reads the module with their shapes as
// Options.ArgShapes.
func Signature(name string, data []byte, opts Options) (stablehlo.Signature, error) {
	f := opts.Format
	if f == Detect {
		f = FormatOf(name, data)
	}
	if f == MLIR {
		src, err := mlir.Parse(name, data)
		if err != nil {
			return stablehlo.Signature{}, err
		}
		return stablehlo.EntrySignature(src, opts.Entry)
	}
	opts.ArgShapes = nil
	mods, err := Bytes(name, data, opts)
	if err != nil {
		return stablehlo.Signature{}, err
	}
	if len(mods) != 1 || mods[0].Entry == nil {
		return stablehlo.Signature{}, fmt.Errorf("%s: %d modules; a signature is one module's", name, len(mods))
	}
	return stablehlo.Signature{Args: hlo.CloneShapes(mods[0].Entry.ParamShapes())}, nil
}
