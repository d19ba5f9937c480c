package main

import (
	"flag"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/pass"
)

// dumpFlags are XLA's --xla_dump_to family.
type dumpFlags struct {
	to, passRE, format string
}

func (f *dumpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.to, "dump-to", "", "write the module after each matching pass into this directory")
	fs.StringVar(&f.passRE, "dump-pass-re", ".*", "dump only after passes whose names match this regexp")
	fs.StringVar(&f.format, "dump-format", "text", "comma-separated dump formats: text, dot, html")
}

// observer returns the dumper for m, or nil when no dump is asked for.
func (f *dumpFlags) observer(m *hlo.Module) (*pass.Dumper, error) {
	if f.to == "" {
		return nil, nil
	}
	return pass.NewDumper(m, pass.DumpOptions{Dir: f.to, PassRE: f.passRE, Formats: splitList(f.format)})
}
