package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hloproto"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/stablehlo"
)

// The formats a module file can be in.
type format int

const (
	formatText  format = iota // HLO text, one or more modules (.hlo, .txt)
	formatProto               // HloModuleProto or XLA's dump HloProto (.pb, .hlo.pb, gzipped too), one module
	formatMLIR                // StableHLO in MLIR text (.mlir), one module
)

// loadModules reads the modules of a file in any format Axle reads: every
// command that takes a module file comes through here. replicas, when
// non-zero, is the replica count of modules that do not give their own.
// What the parser accepted leniently is written to warn as
// `FILE:LINE:COL: warning: ...`.
func loadModules(path string, replicas int64, warn io.Writer) ([]*hlo.Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := formatOf(path, b)
	if err != nil {
		return nil, err
	}
	switch f {
	case formatProto:
		m, err := hloproto.Read(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if replicas != 0 && m.ReplicaCount == 1 {
			m.ReplicaCount = replicas
		}
		return []*hlo.Module{m}, nil
	case formatMLIR:
		m, err := stablehlo.ParseText(path, string(b), stablehlo.Options{})
		if err != nil {
			return nil, err
		}
		if replicas != 0 && m.ReplicaCount == 1 {
			m.ReplicaCount = replicas
		}
		return []*hlo.Module{m}, nil
	}
	return hlotext.ParseFile(string(b), hlotext.Options{File: path, ReplicaCount: replicas,
		Warn: func(w hlotext.Warning) { fmt.Fprintln(warn, w) }})
}

// formatOf decides a file's format by its extension or, when the extension
// says nothing, by its content: HLO text is UTF-8 that says HloModule;
// MLIR text is UTF-8 that defines a func.func.
func formatOf(path string, b []byte) (format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".hlo", ".txt":
		return formatText, nil
	case ".pb":
		return formatProto, nil
	case ".mlir":
		return formatMLIR, nil
	}
	if utf8.Valid(b) {
		switch {
		case bytes.Contains(b, []byte("HloModule")):
			return formatText, nil
		case bytes.Contains(b, []byte("func.func")):
			return formatMLIR, nil
		}
	}
	return formatProto, nil
}

// cmdConvert writes a module file as the other format.
func cmdConvert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "the output format: hlo (text) or proto (HloModuleProto .pb)")
	out := fs.String("o", "", "the output file (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*to != "hlo" && *to != "proto") {
		fmt.Fprintln(stderr, "usage: axle convert --to hlo|proto [-o OUT] FILE")
		return 2
	}
	path := fs.Arg(0)
	mods, err := loadModules(path, 0, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	var data []byte
	if *to == "hlo" {
		var b strings.Builder
		for _, m := range mods {
			b.WriteString(hlotext.Print(m, hlotext.Default))
		}
		data = []byte(b.String())
	} else {
		if len(mods) != 1 {
			fmt.Fprintf(stderr, "axle convert: %s holds %d modules; an HloModuleProto holds one\n", path, len(mods))
			return 1
		}
		if data, err = hloproto.Write(mods[0]); err != nil {
			fmt.Fprintf(stderr, "axle convert: %s: %v\n", path, err)
			return 1
		}
	}
	if *out == "" {
		_, err = stdout.Write(data)
	} else {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "axle convert: %v\n", err)
		return 1
	}
	return 0
}
