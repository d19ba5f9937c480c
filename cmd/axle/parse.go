package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/axle-ml/axle/hlo/hlotext"
)

func cmdParse(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "print XLA's short parsable form")
	replicas := fs.Int64("replica-count", 0, "the module's replica count (as XLA's HloModuleConfig)")
	elide := fs.Bool("elide-large-constants", false, "print constants of more than 10 elements as {...}")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "axle parse: no input files")
		return 2
	}
	opts := hlotext.PrintOptions{Short: *short, ElideLargeConstants: *elide}
	status := 0
	for _, path := range fs.Args() {
		mods, err := loadModules(path, *replicas, stderr)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		for _, m := range mods {
			fmt.Fprint(stdout, hlotext.Print(m, opts))
		}
	}
	return status
}

func cmdVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	replicas := fs.Int64("replica-count", 0, "the module's replica count")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "axle verify: no input files")
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		mods, err := loadModules(path, *replicas, stderr)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		for _, m := range mods {
			if err := verifyModule(m); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", path, err)
				status = 1
				continue
			}
			fmt.Fprintf(stdout, "%s: module %s OK\n", path, m.Name)
		}
	}
	return status
}
