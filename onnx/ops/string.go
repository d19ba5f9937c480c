package ops

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// String ops run on the host: HLO has no string type.

func init() {
	Register(Op{Name: "StringNormalizer", Since: 10, Host: hostStringNormalizer})
	Register(Op{Name: "StringConcat", Since: 20, Host: hostStringConcat})
	Register(Op{Name: "StringSplit", Since: 20, Host: hostStringSplit})
	Register(Op{Name: "RegexFullMatch", Since: 20, Host: hostRegexFullMatch})
	Register(Op{Name: "TfIdfVectorizer", Since: 9, Host: hostTfIdfVectorizer})
}

// strInput is input i as a string tensor, or an error.
func strInput(h *HostCtx, i int) (*onnx.Tensor, error) {
	t := h.Tensor(i)
	if t == nil {
		return nil, h.Errorf("input %d is required", i)
	}
	if !t.IsString() {
		return nil, h.Errorf("input %d is %v, want a string tensor", i, t)
	}
	return t, nil
}

// strSetStrings sets output i to a string tensor.
func strSetStrings(h *HostCtx, i int, strs []string, dims ...int64) error {
	t, err := onnx.NewStringTensor(strs, dims...)
	if err != nil {
		return h.Errorf("%v", err)
	}
	h.Set(i, onnx.TensorValue(t))
	return nil
}

// strNewLit is a zero literal of type t and dims.
func strNewLit(t hlo.DType, dims ...int64) *hlo.Literal {
	return hlo.NewLiteral(hlo.ArrayShape(t, dims...))
}

func hostStringNormalizer(h *HostCtx) error {
	x, err := strInput(h, 0)
	if err != nil {
		return err
	}
	dims := x.Dims()
	switch {
	case len(dims) == 1:
	case len(dims) == 2 && dims[0] == 1:
	default:
		return h.Errorf("input shape %v: want [C] or [1, C]", dims)
	}
	action := h.Node.Str("case_change_action", "NONE")
	sensitive := h.Node.Int("is_case_sensitive", 0) != 0
	stop := map[string]bool{}
	for _, w := range h.Node.Strs("stopwords") {
		if !sensitive {
			w = strings.ToLower(w)
		}
		stop[w] = true
	}
	var out []string
	for _, s := range x.Strs {
		k := s
		if !sensitive {
			k = strings.ToLower(s)
		}
		if stop[k] {
			continue
		}
		switch action {
		case "LOWER":
			s = strings.ToLower(s)
		case "UPPER":
			s = strings.ToUpper(s)
		case "NONE", "":
		default:
			return h.Errorf("unknown case_change_action %q", action)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = []string{""}
	}
	if len(dims) == 1 {
		return strSetStrings(h, 0, out, int64(len(out)))
	}
	return strSetStrings(h, 0, out, 1, int64(len(out)))
}

// strBroadcastIndex maps output linear index i (of dims out) to the linear
// index of an operand of dims in, numpy-style.
func strBroadcastIndex(i int64, out, in []int64) int64 {
	off := len(out) - len(in)
	var idx, stride int64 = 0, 1
	for d := len(out) - 1; d >= 0; d-- {
		c := i % out[d]
		i /= out[d]
		if d >= off {
			k := in[d-off]
			if k != 1 {
				idx += c * stride
			}
			stride *= k
		}
	}
	return idx
}

func hostStringConcat(h *HostCtx) error {
	a, err := strInput(h, 0)
	if err != nil {
		return err
	}
	b, err := strInput(h, 1)
	if err != nil {
		return err
	}
	dims, ok := BroadcastDims(a.Dims(), b.Dims())
	if !ok {
		return h.Errorf("shapes %v and %v do not broadcast", a.Dims(), b.Dims())
	}
	n := numElems(dims)
	out := make([]string, n)
	for i := int64(0); i < n; i++ {
		out[i] = a.Strs[strBroadcastIndex(i, dims, a.Dims())] + b.Strs[strBroadcastIndex(i, dims, b.Dims())]
	}
	return strSetStrings(h, 0, out, dims...)
}

// strSplitWhitespace is Python's str.split(None, maxsplit): runs of
// whitespace separate, leading and trailing whitespace is dropped, but
// what follows the last allowed split is kept as is (trailing whitespace
// included), minus its leading whitespace.
func strSplitWhitespace(s string, maxsplit int) []string {
	var out []string
	i := 0
	for {
		for i < len(s) {
			r, n := rune(s[i]), 1
			if r >= 0x80 {
				r, n = decodeRune(s[i:])
			}
			if !strIsSpace(r) {
				break
			}
			i += n
		}
		if i >= len(s) {
			return out
		}
		if maxsplit >= 0 && len(out) == maxsplit {
			return append(out, s[i:])
		}
		j := i
		for j < len(s) {
			r, n := rune(s[j]), 1
			if r >= 0x80 {
				r, n = decodeRune(s[j:])
			}
			if strIsSpace(r) {
				break
			}
			j += n
		}
		out = append(out, s[i:j])
		i = j
	}
}

// strIsSpace is Python's str.isspace for one character: Unicode
// White_Space plus the ASCII separators U+001C..U+001F.
func strIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func hostStringSplit(h *HostCtx) error {
	x, err := strInput(h, 0)
	if err != nil {
		return err
	}
	maxsplit := -1
	if h.Node.Has("maxsplit") {
		maxsplit = int(h.Node.Int("maxsplit", -1))
		if maxsplit < 0 {
			maxsplit = -1
		}
	}
	delim := h.Node.Str("delimiter", "")
	parts := make([][]string, len(x.Strs))
	width := 0
	for i, s := range x.Strs {
		var p []string
		if delim == "" {
			p = strSplitWhitespace(s, maxsplit)
		} else {
			p = strings.SplitN(s, delim, maxsplit+1)
			if maxsplit < 0 {
				p = strings.Split(s, delim)
			}
		}
		parts[i] = p
		width = max(width, len(p))
	}
	dims := x.Dims()
	ydims := append(append([]int64(nil), dims...), int64(width))
	y := make([]string, len(x.Strs)*width)
	z := strNewLit(hlo.S64, dims...)
	for i, p := range parts {
		copy(y[i*width:], p)
		z.SetInt64(i, int64(len(p)))
	}
	if err := strSetStrings(h, 0, y, ydims...); err != nil {
		return err
	}
	h.Set(1, onnx.LiteralValue(z))
	return nil
}

func hostRegexFullMatch(h *HostCtx) error {
	x, err := strInput(h, 0)
	if err != nil {
		return err
	}
	pat := h.Node.Str("pattern", "")
	re, err := regexp.Compile(`\A(?:` + pat + `)\z`)
	if err != nil {
		return h.Errorf("pattern %q: %v", pat, err)
	}
	out := strNewLit(hlo.Pred, x.Dims()...)
	for i, s := range x.Strs {
		out.SetBool(i, re.MatchString(s))
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// hostTfIdfVectorizer counts the pool's n-grams (with skips) in each row
// of the input.
func hostTfIdfVectorizer(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil {
		return h.Errorf("input 0 is required")
	}
	n := h.Node
	minN, maxN := int(n.Int("min_gram_length", 1)), int(n.Int("max_gram_length", 1))
	maxSkip := int(n.Int("max_skip_count", 0))
	mode := n.Str("mode", "TF")
	counts := n.Ints("ngram_counts")
	indexes := n.Ints("ngram_indexes")
	weights := n.Floats("weights")
	poolStr := n.Strs("pool_strings")
	poolInt := n.Ints("pool_int64s")
	isStr := x.IsString()
	if minN < 1 || maxN < minN || maxSkip < 0 {
		return h.Errorf("bad gram lengths [%d, %d] or skip %d", minN, maxN, maxSkip)
	}
	poolLen := len(poolInt)
	if isStr {
		poolLen = len(poolStr)
	}
	// keys of the pool's n-grams: joined with a separator that cannot
	// occur in the encoded items.
	key := func(items []string) string { return strings.Join(items, "\x00") }
	itemStr := func(v int64) string { return strconv.FormatInt(v, 10) }
	type gram struct{ n, out int }
	pool := map[string]gram{}
	outLen := int64(0)
	for _, ix := range indexes {
		if ix < 0 {
			return h.Errorf("negative ngram_indexes entry %d", ix)
		}
		outLen = max(outLen, ix+1)
	}
	pos := 0 // index into ngram_indexes
	for g := range counts {
		start := int(counts[g])
		end := poolLen
		if g+1 < len(counts) {
			end = int(counts[g+1])
		}
		size := g + 1
		if start < 0 || end > poolLen || start > end || (end-start)%size != 0 {
			return h.Errorf("bad ngram_counts %v for a pool of %d", counts, poolLen)
		}
		for p := start; p < end; p += size {
			items := make([]string, size)
			for k := 0; k < size; k++ {
				if isStr {
					items[k] = poolStr[p+k]
				} else {
					items[k] = itemStr(poolInt[p+k])
				}
			}
			if pos >= len(indexes) {
				return h.Errorf("fewer ngram_indexes than n-grams in the pool")
			}
			pool[key(items)] = gram{size, int(indexes[pos])}
			pos++
		}
	}
	dims := x.Dims()
	var rows, cols int
	switch len(dims) {
	case 0:
		rows, cols = 1, 1
	case 1:
		rows, cols = 1, int(dims[0])
	case 2:
		rows, cols = int(dims[0]), int(dims[1])
	default:
		return h.Errorf("input of rank %d: want 1 or 2", len(dims))
	}
	item := func(i int) string {
		if isStr {
			return x.Strs[i]
		}
		return itemStr(x.Lit.GetInt64(i))
	}
	outDims := []int64{outLen}
	if len(dims) == 2 {
		outDims = []int64{int64(rows), outLen}
	}
	out := strNewLit(hlo.F32, outDims...)
	cnt := make([]float64, outLen)
	items := make([]string, 0, maxN)
	for r := 0; r < rows; r++ {
		clear(cnt)
		base := r * cols
		for size := minN; size <= maxN; size++ {
			skips := maxSkip
			if size == 1 {
				skips = 0
			}
			for skip := 0; skip <= skips; skip++ {
				step := skip + 1
				for s := 0; s+(size-1)*step < cols; s++ {
					items = items[:0]
					for k := 0; k < size; k++ {
						items = append(items, item(base+s+k*step))
					}
					if g, ok := pool[key(items)]; ok && g.n == size {
						cnt[g.out]++
					}
				}
			}
		}
		for j, c := range cnt {
			v := c
			w := 1.0
			if j < len(weights) {
				w = float64(weights[j])
			}
			switch mode {
			case "TF":
			case "IDF":
				if c > 0 {
					v = w
				}
			case "TFIDF":
				v = c * w
			default:
				return h.Errorf("unknown mode %q", mode)
			}
			out.SetFloat64(r*int(outLen)+j, v)
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}
