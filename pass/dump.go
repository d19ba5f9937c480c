package pass

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/hlo/hlotext"
)

// DumpOptions say where and what to dump (XLA's --xla_dump_to,
// --xla_dump_hlo_pass_re, --xla_dump_hlo_as_text/dot/html).
type DumpOptions struct {
	Dir string
	// PassRE selects the passes after which the module is dumped.
	PassRE string
	// Formats: any of "text", "dot", "html". Text and DOT files are
	// written for the input and after every matching pass that changed
	// the module; the HTML page, one per module, shows every pass run.
	Formats []string
}

// Dumper writes a module as passes transform it: files named
// <module>.<seq>.<pass>.hlo and .dot, and <module>.html.
type Dumper struct {
	opts    DumpOptions
	re      *regexp.Regexp
	name    string
	columns []column
}

// column is one state of the module for the HTML page.
type column struct {
	seq     int
	pass    string
	changed bool
	elapsed time.Duration
	text    string
}

var dumpFormats = []string{"text", "dot", "html"}

// NewDumper prepares the directory and records m as the input.
func NewDumper(m *hlo.Module, opts DumpOptions) (*Dumper, error) {
	for _, f := range opts.Formats {
		if !slices.Contains(dumpFormats, f) {
			return nil, fmt.Errorf("unknown dump format %q (want %s)", f, strings.Join(dumpFormats, ", "))
		}
	}
	if opts.PassRE == "" {
		opts.PassRE = ".*"
	}
	re, err := regexp.Compile(opts.PassRE)
	if err != nil {
		return nil, fmt.Errorf("dump pass regexp: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	d := &Dumper{opts: opts, re: re, name: fileSafe(m.Name)}
	return d, d.record(Event{Pass: "input", Changed: true, Module: m})
}

func (d *Dumper) wants(format string) bool { return slices.Contains(d.opts.Formats, format) }

// Observe is the pass.Observer that dumps after each pass.
func (d *Dumper) Observe(ev Event) error {
	if !d.re.MatchString(ev.Pass) {
		return nil
	}
	return d.record(ev)
}

func (d *Dumper) record(ev Event) error {
	text := ""
	if d.wants("html") || (ev.Changed && d.wants("text")) {
		text = hlotext.Print(ev.Module, hlotext.Short)
	}
	if d.wants("html") {
		d.columns = append(d.columns, column{seq: ev.Seq, pass: ev.Pass, changed: ev.Changed, elapsed: ev.Elapsed, text: text})
	}
	if !ev.Changed {
		return nil
	}
	base := filepath.Join(d.opts.Dir, fmt.Sprintf("%s.%04d.%s", d.name, ev.Seq, fileSafe(ev.Pass)))
	if d.wants("text") {
		if err := os.WriteFile(base+".hlo", []byte(text), 0o644); err != nil {
			return err
		}
	}
	if d.wants("dot") {
		if err := os.WriteFile(base+".dot", []byte(DOT(ev.Module)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Finish writes the HTML page, if asked for.
func (d *Dumper) Finish() error {
	if !d.wants("html") {
		return nil
	}
	page := HTML(d.name, d.columns)
	return os.WriteFile(filepath.Join(d.opts.Dir, d.name+".html"), []byte(page), 0o644)
}

// fileSafe keeps letters, digits, '-', '_' and '.'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
