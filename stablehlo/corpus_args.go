package stablehlo

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/stablehlo/mlir"
)

// argsFlag is the reference interpreter's --args="[dense<...> : tensor<...>, ...]",
// the entry's arguments on a RUN line.
var argsFlag = regexp.MustCompile(`--args="([^"]*)"`)

// runArgs returns the --args text of the first RUN line that interprets
// the file and is expected to succeed (lines run under `not` test the
// flag's error messages), or "".
func runArgs(src []byte) string {
	for _, m := range runLine.FindAllStringSubmatch(string(src), -1) {
		cmd := strings.TrimSpace(m[3])
		if m[2] != "" || strings.HasPrefix(cmd, "not ") || !strings.Contains(cmd, "--interpret") {
			continue
		}
		if a := argsFlag.FindStringSubmatch(cmd); a != nil {
			return a[1]
		}
	}
	return ""
}

// parseArgs reads an --args list: a bracketed, comma-separated list of
// dense attributes, each with its tensor type. The attributes are parsed
// as the values of constants of a small generated function, so they read
// exactly as a program's own constants do.
func parseArgs(text string) ([]*hlo.Literal, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "[") || !strings.HasSuffix(text, "]") {
		return nil, fmt.Errorf("--args %q: want [dense<...> : tensor<...>, ...]", text)
	}
	elems := splitTopLevel(text[1 : len(text)-1])
	var b strings.Builder
	b.WriteString("func.func @args() {\n")
	for i, e := range elems {
		if !strings.HasPrefix(e, "dense<") {
			return nil, fmt.Errorf("--args element %d %q: want a dense attribute", i, e)
		}
		fmt.Fprintf(&b, "  %%a%d = stablehlo.constant %s\n", i, e)
	}
	b.WriteString("  func.return\n}\n")
	m, err := mlir.Parse("--args", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	body, err := funcBody(m.Ops[0])
	if err != nil {
		return nil, err
	}
	var out []*hlo.Literal
	for _, op := range body.Ops {
		d, ok := op.Attr("value").(mlir.DenseAttr)
		if !ok {
			continue
		}
		sh, err := resultShape(op, 0)
		if err != nil {
			return nil, err
		}
		lit, err := denseLiteral(d, sh)
		if err != nil {
			return nil, fmt.Errorf("--args element %d: %w", len(out), err)
		}
		out = append(out, lit)
	}
	return out, nil
}

// splitTopLevel splits s at the commas outside <>, [] and ().
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '<', '[', '(':
			depth++
		case '>', ']', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}
