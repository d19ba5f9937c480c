package hlo

import (
	"slices"
	"strconv"
	"strings"
)

// Layout is XLA's Layout: the minor-to-major dimension order plus the
// details XLA prints after a colon (tiling `T(8,128)`, element size `E(4)`,
// memory space `S(1)`, dim level types `D(...)`, ...). Details are kept as
// ordered items so a parsed layout prints back exactly as it was written.
type Layout struct {
	MinorToMajor []int64
	Items        []LayoutItem
}

// LayoutItem is one detail after the colon of a layout: a tag such as "T",
// "E", "S", "L", "#", "*", "SC", "P", "M", "D" and its body, which is the
// text between the tag and the next item, parentheses included.
type LayoutItem struct {
	Tag  string
	Body string
}

// DefaultLayout returns {rank-1, ..., 1, 0}.
func DefaultLayout(rank int) *Layout {
	var l *Layout
	if rank <= 4 {
		// One allocation for the common ranks: parsers make a layout for
		// every array shape they read.
		b := &struct {
			l   Layout
			buf [4]int64
		}{}
		b.l.MinorToMajor = b.buf[:rank:rank]
		l = &b.l
	} else {
		l = &Layout{MinorToMajor: make([]int64, rank)}
	}
	for i := range l.MinorToMajor {
		l.MinorToMajor[i] = int64(rank - 1 - i)
	}
	return l
}

// Clone deep-copies l.
func (l *Layout) Clone() *Layout {
	if l == nil {
		return nil
	}
	return &Layout{MinorToMajor: slices.Clone(l.MinorToMajor), Items: slices.Clone(l.Items)}
}

// Equal compares two layouts; nil equals nil only.
func (l *Layout) Equal(o *Layout) bool {
	if l == nil || o == nil {
		return l == o
	}
	return slices.Equal(l.MinorToMajor, o.MinorToMajor) && slices.Equal(l.Items, o.Items)
}

// IsDefault reports whether l is the default layout for its rank with no details.
func (l *Layout) IsDefault() bool {
	if l == nil || len(l.Items) > 0 {
		return false
	}
	n := len(l.MinorToMajor)
	for i, d := range l.MinorToMajor {
		if d != int64(n-1-i) {
			return false
		}
	}
	return true
}

// Item returns the body of the first detail with the given tag.
func (l *Layout) Item(tag string) (string, bool) {
	if l == nil {
		return "", false
	}
	for _, it := range l.Items {
		if it.Tag == tag {
			return it.Body, true
		}
	}
	return "", false
}

// ElementSizeBits is the E(n) detail, or 0 when absent.
func (l *Layout) ElementSizeBits() int64 { return l.intItem("E") }

// MemorySpace is the S(n) detail, or 0 when absent.
func (l *Layout) MemorySpace() int64 { return l.intItem("S") }

func (l *Layout) intItem(tag string) int64 {
	body, ok := l.Item(tag)
	if !ok {
		return 0
	}
	n, _ := strconv.ParseInt(strings.Trim(body, "()"), 10, 64)
	return n
}

// Tiles returns the T(...)(...) detail as a list of tiles; a `*` (combined
// dimension) is reported as -1.
func (l *Layout) Tiles() [][]int64 {
	body, ok := l.Item("T")
	if !ok {
		return nil
	}
	var tiles [][]int64
	for _, part := range strings.Split(body, "(") {
		part = strings.TrimSuffix(part, ")")
		if part == "" {
			continue
		}
		var tile []int64
		for _, f := range strings.Split(part, ",") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				n = -1
			}
			tile = append(tile, n)
		}
		tiles = append(tiles, tile)
	}
	return tiles
}

// String prints l as XLA does: {1,0:T(8,128)}.
func (l *Layout) String() string {
	var b strings.Builder
	l.Append(&b)
	return b.String()
}

// Append writes l to b.
func (l *Layout) Append(b *strings.Builder) {
	b.WriteByte('{')
	for i, d := range l.MinorToMajor {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(l.Items) > 0 {
		b.WriteByte(':')
		for _, it := range l.Items {
			b.WriteString(it.Tag)
			b.WriteString(it.Body)
		}
	}
	b.WriteByte('}')
}
