package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hloproto"
	"github.com/axle-ml/axle/hlo/hlotext"
	"github.com/axle-ml/axle/load"
)

// loadModules reads the modules of a file in any format Axle reads
// (package load decides which, by extension or content): every command
// that takes a module file comes through here. replicas, when non-zero,
// is the replica count of modules that do not give their own. What the
// parser accepted leniently is written to warn as
// `FILE:LINE:COL: warning: ...`.
func loadModules(path string, replicas int64, warn io.Writer) ([]*hlo.Module, error) {
	return load.File(path, load.Options{ReplicaCount: replicas, Warn: warnTo(warn)})
}

// warnTo writes the parser's warnings to w, one a line.
func warnTo(w io.Writer) func(hlotext.Warning) {
	return func(x hlotext.Warning) { fmt.Fprintln(w, x) }
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
