package stablehlo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// Case is one program of a StableHLO test corpus: a file, or one
// `// -----` section of an interpreter test file.
type Case struct {
	Name string // the file's path, with "#N" for section N of a split file
	File string
	Src  []byte // the section's text, lines before it blanked
	// Interpret is set when the RUN lines run the program (its checks are
	// evaluated); otherwise the case is an import test.
	Interpret bool
	// Skip says why the case is not run (RUN-DISABLED), or "".
	Skip string
	// Args is the entry's arguments from the RUN line's --args (see
	// parseArgs), or "".
	Args string
}

var runLine = regexp.MustCompile(`(?m)^//\s*(RUN(-DISABLED)?[^:]*):(.*)$`)

// FindCases lists the cases of .mlir files under the given files and
// directories, sorted by name.
func FindCases(paths ...string) ([]Case, error) {
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".mlir") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, fileCases(f, src)...)
	}
	return out, nil
}

// fileCases splits a file by its RUN lines' -split-input-file.
func fileCases(file string, src []byte) []Case {
	interpret, split, disabled := false, false, ""
	for _, m := range runLine.FindAllStringSubmatch(string(src), -1) {
		if m[2] != "" {
			if disabled == "" {
				disabled = strings.TrimSpace(m[1])
			}
			continue
		}
		if strings.Contains(m[3], "--interpret") {
			interpret = true
		}
		if strings.Contains(m[3], "split-input-file") {
			split = true
		}
	}
	skip := ""
	if disabled != "" && !interpret {
		skip = disabled
	}
	if !split {
		return []Case{{Name: file, File: file, Src: src, Interpret: interpret, Skip: skip, Args: runArgs(src)}}
	}
	var out []Case
	for i, sec := range mlir.SplitFile(src) {
		out = append(out, Case{Name: fmt.Sprintf("%s#%d", file, i), File: file, Src: sec, Interpret: interpret, Skip: skip, Args: runArgs(src)})
	}
	return out
}

// Outcome is the result of running a case.
type Outcome struct {
	Status string // "pass", "fail", "skip" or "unsupported"
	Reason string
	// Printed holds what the program's interpreter.print ops printed
	// (Program.Printed), for the runner's log.
	Printed []string
}

// Executor runs an entry computation on its arguments (none for most
// cases) and returns its outputs, the root tuple flattened one level.
type Executor func(m *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error)

// RunCase converts a case and, when it interprets, runs it with exec and
// evaluates its checks. Errors wrapping ErrUnsupported give the
// "unsupported" status; expect_serialized_eq checks give "skip".
func RunCase(c Case, exec Executor) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Status: "fail", Reason: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if c.Skip != "" {
		return Outcome{Status: "skip", Reason: c.Skip}
	}
	m, err := mlir.Parse(c.File, c.Src)
	if err != nil {
		return failure(err)
	}
	if !hasFunc(m) {
		return Outcome{Status: "pass", Reason: "no functions"}
	}
	if !c.Interpret {
		mod, err := Convert(m, Options{ArgShapes: sampleArgShapes(m)})
		if err != nil {
			return failure(err)
		}
		if err := hlo.Verify(mod); err != nil {
			return Outcome{Status: "fail", Reason: "verify: " + err.Error()}
		}
		return Outcome{Status: "pass"}
	}
	// Without @main, the interpreter runs every public function.
	var printed []string
	for _, entry := range entries(m) {
		o := runEntry(m, entry, c.Args, exec)
		printed = append(printed, o.Printed...)
		if o.Status != "pass" {
			o.Printed = printed
			return o
		}
	}
	return Outcome{Status: "pass", Printed: printed}
}

// entries lists the functions a test runs: main, else every public one.
func entries(m *mlir.Module) []string {
	var public []string
	for _, op := range m.Ops {
		if op.Name != "func.func" {
			continue
		}
		name := stringAttr(op.Attr("sym_name"))
		if name == "main" {
			return []string{""}
		}
		if stringAttr(op.Attr("sym_visibility")) != "private" {
			public = append(public, name)
		}
	}
	if len(public) <= 1 {
		return []string{""}
	}
	return public
}

func runEntry(m *mlir.Module, entry, argText string, exec Executor) Outcome {
	p, err := ConvertProgram(m, Options{Entry: entry})
	if err != nil {
		return failure(err)
	}
	if err := hlo.Verify(p.Module); err != nil {
		return Outcome{Status: "fail", Reason: "verify: " + err.Error()}
	}
	var args []*hlo.Literal
	if argText != "" {
		if args, err = parseArgs(argText); err != nil {
			return Outcome{Status: "fail", Reason: err.Error()}
		}
	}
	if n := len(p.Module.Entry.Params); n != len(args) {
		return Outcome{Status: "unsupported", Reason: fmt.Sprintf("entry takes %d arguments and the case gives %d", n, len(args))}
	}
	outs, err := exec(p.Module, args)
	if err != nil {
		return failure(err)
	}
	printed := p.Printed(outs)
	if len(args) > 0 {
		// The reference interpreter prints the results of a run with
		// --args (its FileCheck lines match them): log them likewise.
		for i := range p.NumResults {
			printed = append(printed, fmt.Sprintf("result %d: %s", i, outs[i]))
		}
	}
	if err := p.Compare(outs); err != nil {
		return Outcome{Status: "fail", Reason: err.Error(), Printed: printed}
	}
	return Outcome{Status: "pass", Printed: printed}
}

func failure(err error) Outcome {
	switch {
	case errors.Is(err, ErrSerializedCheck):
		return Outcome{Status: "skip", Reason: "check.expect_serialized_eq"}
	case errors.Is(err, ErrUnsupported):
		return Outcome{Status: "unsupported", Reason: UnsupportedReason(err)}
	}
	// The parser reads pretty syntax op by op; an op it cannot read yet
	// is a gap of the front end, not a wrong result.
	var pe *mlir.Error
	if errors.As(err, &pe) && strings.Contains(pe.Msg, "in pretty syntax") {
		msg := pe.Msg
		if i := strings.Index(msg, " in pretty syntax"); i >= 0 {
			msg = msg[:i]
		}
		return Outcome{Status: "unsupported", Reason: "parser: pretty " + msg}
	}
	return Outcome{Status: "fail", Reason: err.Error()}
}

func hasFunc(m *mlir.Module) bool {
	for _, op := range m.Ops {
		if op.Name == "func.func" {
			return true
		}
	}
	return false
}

// sampleSize is the size an import test gives every `?` dimension of its
// entry's arguments: a shape-polymorphic program must convert (and
// verify) at any size, and 2 keeps size-1 broadcasting distinct.
const sampleSize = 2

// sampleArgShapes returns argument shapes for an entry with dynamic
// argument types, each `?` of size sampleSize; nil when all are static.
func sampleArgShapes(m *mlir.Module) []hlo.Shape {
	var entry *mlir.Op
	for _, op := range m.Ops {
		if op.Name == "func.func" && (stringAttr(op.Attr("sym_name")) == "main" || entry == nil && stringAttr(op.Attr("sym_visibility")) != "private") {
			entry = op
		}
	}
	if entry == nil || len(entry.Regions) != 1 || len(entry.Regions[0].Blocks) != 1 {
		return nil
	}
	args := entry.Regions[0].Blocks[0].Args
	shapes := make([]hlo.Shape, len(args))
	dynamic := false
	for i, a := range args {
		sh, err := shapeOfType(a.Type)
		if err != nil {
			return nil
		}
		for d, n := range sh.Dims {
			if n < 0 {
				sh.Dims[d] = sampleSize
				dynamic = true
			}
		}
		shapes[i] = sh
	}
	if !dynamic {
		return nil
	}
	return shapes
}
