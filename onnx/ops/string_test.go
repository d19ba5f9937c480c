package ops

import (
	"slices"
	"testing"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

func TestStringSplitPython(t *testing.T) {
	for _, c := range []struct {
		s        string
		maxsplit int
		want     []string
	}{
		{"  a  b c ", -1, []string{"a", "b", "c"}},
		{"  a  b c ", 1, []string{"a", "b c "}},
		{"  a  b c ", 0, []string{"a  b c "}},
		{"   ", -1, nil},
		{"", 2, nil},
	} {
		if got := strSplitWhitespace(c.s, c.maxsplit); !slices.Equal(got, c.want) {
			t.Errorf("split(%q, %d) = %q, want %q", c.s, c.maxsplit, got, c.want)
		}
	}
}

func TestTfIdfSkipGrams(t *testing.T) {
	// pool: unigrams 2, 3; bigram (2, 3); skips up to 1
	x, _ := hlo.LiteralFromSlice([]int32{2, 5, 3, 2, 3}, 5)
	n := mlTestNode("TfIdfVectorizer", map[string]any{
		"min_gram_length": int64(1), "max_gram_length": int64(2), "max_skip_count": int64(1),
		"mode": "TF", "ngram_counts": []int64{0, 2}, "ngram_indexes": []int64{0, 1, 2},
		"pool_int64s": []int64{2, 3, 2, 3},
	})
	out := mlTestRun(t, hostTfIdfVectorizer, n, onnx.TensorOf(x))
	// unigrams once each; bigram (2,3) adjacent at 3..4 and with one
	// skip at 0..2
	if got := mlTestFloats(t, out[0]); !slices.Equal(got, []float64{2, 2, 2}) {
		t.Errorf("got %v", got)
	}
}
