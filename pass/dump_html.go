package pass

import (
	"fmt"
	"html"
	"regexp"
	"strings"
)

// HTML renders the pass-by-pass history of one module as one
// self-contained page, after Go's GOSSAFUNC ssa.html: a column per pass
// run (the input first), columns of passes that changed nothing collapsed
// to a thin strip (click to open), lines that differ from the previous
// column highlighted, and clicking an instruction name highlights it in
// every column, each new selection in its own colour.
func HTML(module string, cols []column) string {
	var b strings.Builder
	changed := 0
	var total float64
	for _, c := range cols {
		if c.changed && c.pass != "input" {
			changed++
		}
		total += c.elapsed.Seconds()
	}
	fmt.Fprintf(&b, htmlHead, html.EscapeString(module))
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"sum\">%d pass runs, %d changed the module, %.3f ms in passes. Click a name to highlight it in every column; click a grey strip to open a pass that changed nothing.</p>\n<div class=\"cols\">\n",
		html.EscapeString(module), len(cols)-1, changed, total*1e3)
	names := definedNames(cols)
	var prev map[string]bool
	for _, c := range cols {
		writeColumn(&b, c, prev, names)
		prev = lineSet(c.text)
	}
	b.WriteString("</div>\n" + htmlScript + "</body></html>\n")
	return b.String()
}

func writeColumn(b *strings.Builder, c column, prev map[string]bool, names map[string]bool) {
	class := "col"
	if !c.changed {
		class += " collapsed"
	}
	title := c.pass
	if c.seq > 0 {
		title = fmt.Sprintf("%d. %s", c.seq, c.pass)
	}
	state := "changed"
	if !c.changed {
		state = "unchanged"
	}
	if c.pass == "input" {
		state = "input"
	}
	fmt.Fprintf(b, "<div class=%q><div class=\"hdr\" title=\"%s (%s, %s)\"><span class=\"t\">%s</span><span class=\"d\">%s · %s</span></div><pre>",
		class, html.EscapeString(c.pass), state, c.elapsed, html.EscapeString(title), state, c.elapsed)
	for _, line := range strings.Split(strings.TrimRight(c.text, "\n"), "\n") {
		lc := "l"
		if prev != nil && !prev[line] && strings.TrimSpace(line) != "" {
			lc += " chg"
		}
		fmt.Fprintf(b, "<div class=%q>%s</div>", lc, markNames(line, names))
	}
	b.WriteString("</pre></div>\n")
}

var (
	defRE   = regexp.MustCompile(`^\s*(?:ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=`)
	identRE = regexp.MustCompile(`%?[A-Za-z_][\w.\-]*`)
)

// definedNames collects every instruction name defined in any column.
func definedNames(cols []column) map[string]bool {
	names := map[string]bool{}
	for _, c := range cols {
		for _, line := range strings.Split(c.text, "\n") {
			if m := defRE.FindStringSubmatch(line); m != nil {
				names[m[1]] = true
			}
		}
	}
	return names
}

func lineSet(text string) map[string]bool {
	s := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		s[line] = true
	}
	return s
}

// markNames escapes a line and wraps every instruction name in a
// clickable span.
func markNames(line string, names map[string]bool) string {
	var b strings.Builder
	last := 0
	for _, loc := range identRE.FindAllStringIndex(line, -1) {
		tok := strings.TrimPrefix(line[loc[0]:loc[1]], "%")
		if !names[tok] {
			continue
		}
		b.WriteString(html.EscapeString(line[last:loc[0]]))
		fmt.Fprintf(&b, "<span class=\"v\" data-v=\"%s\">%s</span>", html.EscapeString(tok), html.EscapeString(line[loc[0]:loc[1]]))
		last = loc[1]
	}
	b.WriteString(html.EscapeString(line[last:]))
	return b.String()
}

const htmlHead = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%s: passes</title>
<style>
body { font-family: sans-serif; margin: 8px; background: #fafafa; }
h1 { font-size: 18px; margin: 4px 0; }
.sum { font-size: 12px; color: #444; margin: 4px 0 8px; }
.cols { display: flex; align-items: flex-start; overflow-x: auto; gap: 4px; }
.col { flex: 0 0 auto; border: 1px solid #bbb; background: white; max-width: 44em; }
.hdr { background: #e4ecf7; padding: 3px 6px; font-size: 12px; cursor: pointer; border-bottom: 1px solid #bbb; }
.hdr .t { font-weight: bold; margin-right: 8px; }
.hdr .d { color: #666; }
pre { margin: 0; padding: 4px 6px; font-size: 11px; line-height: 1.35; overflow-x: auto; }
.l.chg { background: #fff3b0; }
.collapsed { width: 1.6em; background: #eee; cursor: pointer; }
.collapsed pre, .collapsed .hdr .d { display: none; }
.collapsed .hdr { writing-mode: vertical-rl; background: #ddd; border: none; height: 20em; }
.v { cursor: pointer; border-radius: 2px; }
.v:hover { text-decoration: underline; }
.h0 { background: #ffd84d; } .h1 { background: #8fe08f; } .h2 { background: #8fc7ff; }
.h3 { background: #ffa6c9; } .h4 { background: #d2b0ff; } .h5 { background: #ffbf80; }
</style></head><body>
`

const htmlScript = `<script>
(function () {
  var colors = ["h0", "h1", "h2", "h3", "h4", "h5"], used = {}, next = 0;
  function mark(name, cls) {
    document.querySelectorAll('.v[data-v="' + CSS.escape(name) + '"]').forEach(function (e) {
      colors.forEach(function (c) { e.classList.remove(c); });
      if (cls) e.classList.add(cls);
    });
  }
  document.addEventListener("click", function (ev) {
    var v = ev.target.closest(".v");
    if (v) {
      var name = v.dataset.v;
      if (used[name]) { mark(name, null); delete used[name]; }
      else { used[name] = colors[next++ % colors.length]; mark(name, used[name]); }
      return;
    }
    var col = ev.target.closest(".col");
    if (col && (col.classList.contains("collapsed") || ev.target.closest(".hdr"))) {
      col.classList.toggle("collapsed");
    }
  });
})();
</script>
`
