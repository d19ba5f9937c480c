package ops

import (
	"image"
)

// A JPEG 2000 (ITU-T T.800) decoder for the reversible path: one tile,
// the 5/3 integer wavelet, no quantization, code-block style 0, default
// precincts, any number of layers, the reversible color transform. Its
// output is exact (lossless streams decode to the encoded pixels), so it
// matches any conforming decoder. Other streams are reported unsupported.

type j2kError string

func (e j2kError) Error() string { return "jpeg2000: " + string(e) }

// MQ arithmetic decoder (Annex C).

var j2kQe = [47]uint32{
	0x5601, 0x3401, 0x1801, 0x0AC1, 0x0521, 0x0221, 0x5601, 0x5401, 0x4801, 0x3801,
	0x3001, 0x2401, 0x1C01, 0x1601, 0x5601, 0x5401, 0x5101, 0x4801, 0x3801, 0x3401,
	0x3001, 0x2801, 0x2401, 0x2201, 0x1C01, 0x1801, 0x1601, 0x1401, 0x1201, 0x1101,
	0x0AC1, 0x09C1, 0x08A1, 0x0521, 0x0441, 0x02A1, 0x0221, 0x0141, 0x0111, 0x0085,
	0x0049, 0x0025, 0x0015, 0x0009, 0x0005, 0x0001, 0x5601,
}

var j2kNMPS = [47]uint8{
	1, 2, 3, 4, 5, 38, 7, 8, 9, 10, 11, 12, 13, 29, 15, 16, 17, 18, 19, 20,
	21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 45, 46,
}

var j2kNLPS = [47]uint8{
	1, 6, 9, 12, 29, 33, 6, 14, 14, 14, 17, 18, 20, 21, 14, 14, 15, 16, 17, 18,
	19, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
	38, 39, 40, 41, 42, 43, 46,
}

type j2kMQ struct {
	d     []byte
	bp    int
	a, c  uint32
	ct    int
	state [19]uint8
	mps   [19]uint8
}

func (m *j2kMQ) byteAt(i int) uint32 {
	if i < len(m.d) {
		return uint32(m.d[i])
	}
	return 0xff
}

func (m *j2kMQ) bytein() {
	if m.byteAt(m.bp) == 0xff {
		if m.byteAt(m.bp+1) > 0x8f {
			m.c += 0xff00
			m.ct = 8
		} else {
			m.bp++
			m.c += m.byteAt(m.bp) << 9
			m.ct = 7
		}
	} else {
		m.bp++
		m.c += m.byteAt(m.bp) << 8
		m.ct = 8
	}
}

func (m *j2kMQ) init(d []byte) {
	m.d, m.bp = d, 0
	m.c = m.byteAt(0) << 16
	m.bytein()
	m.c <<= 7
	m.ct -= 7
	m.a = 0x8000
	for i := range m.state {
		m.state[i], m.mps[i] = 0, 0
	}
	m.state[0] = 4   // zero coding, all neighbours insignificant
	m.state[17] = 3  // run length
	m.state[18] = 46 // uniform
}

func (m *j2kMQ) renorm() {
	for {
		if m.ct == 0 {
			m.bytein()
		}
		m.a <<= 1
		m.c <<= 1
		m.ct--
		if m.a&0x8000 != 0 {
			return
		}
	}
}

func (m *j2kMQ) decode(cx int) int {
	s := m.state[cx]
	qe := j2kQe[s]
	sw := s == 0 || s == 6 || s == 14
	m.a -= qe
	var d uint8
	if m.c>>16 < qe {
		// the LPS sub-interval, with the conditional exchange
		if m.a < qe {
			d = m.mps[cx]
			m.state[cx] = j2kNMPS[s]
		} else {
			d = 1 - m.mps[cx]
			if sw {
				m.mps[cx] = 1 - m.mps[cx]
			}
			m.state[cx] = j2kNLPS[s]
		}
		m.a = qe
	} else {
		m.c -= qe << 16
		if m.a&0x8000 != 0 {
			return int(m.mps[cx])
		}
		if m.a < qe {
			d = 1 - m.mps[cx]
			if sw {
				m.mps[cx] = 1 - m.mps[cx]
			}
			m.state[cx] = j2kNLPS[s]
		} else {
			d = m.mps[cx]
			m.state[cx] = j2kNMPS[s]
		}
	}
	m.renorm()
	return int(d)
}

// Tier-1: the code-block coefficient bit-plane decoder (Annex D).

const (
	j2kLL = iota
	j2kHL
	j2kLH
	j2kHH
)

// j2kDecodeBlock decodes a code-block's passes into coef (w*h, row-major).
func j2kDecodeBlock(data []byte, w, h, numbps, passes, band int, coef []int32) {
	if numbps <= 0 || passes <= 0 || w <= 0 || h <= 0 {
		return
	}
	W := w + 2
	sig := make([]bool, W*(h+2))
	neg := make([]bool, W*(h+2))
	visited := make([]bool, W*(h+2))
	refined := make([]bool, W*(h+2))
	mag := make([]int32, w*h)
	var mq j2kMQ
	mq.init(data)
	at := func(x, y int) int { return (y+1)*W + x + 1 }
	counts := func(x, y int) (hc, vc, dc int) {
		i := at(x, y)
		b := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		hc = b(sig[i-1]) + b(sig[i+1])
		vc = b(sig[i-W]) + b(sig[i+W])
		dc = b(sig[i-W-1]) + b(sig[i-W+1]) + b(sig[i+W-1]) + b(sig[i+W+1])
		return
	}
	zc := func(x, y int) int {
		hc, vc, dc := counts(x, y)
		switch band {
		case j2kHH:
			hv := hc + vc
			switch {
			case dc >= 3:
				return 8
			case dc == 2:
				if hv >= 1 {
					return 7
				}
				return 6
			case dc == 1:
				return 3 + min(hv, 2)
			}
			return min(hv, 2)
		case j2kHL:
			hc, vc = vc, hc
		}
		switch {
		case hc == 2:
			return 8
		case hc == 1:
			if vc >= 1 {
				return 7
			}
			if dc >= 1 {
				return 6
			}
			return 5
		case vc >= 1:
			return 2 + vc
		}
		return min(dc, 2)
	}
	contrib := func(i int) int {
		if !sig[i] {
			return 0
		}
		if neg[i] {
			return -1
		}
		return 1
	}
	decodeSign := func(x, y int) {
		i := at(x, y)
		hs := max(-1, min(1, contrib(i-1)+contrib(i+1)))
		vs := max(-1, min(1, contrib(i-W)+contrib(i+W)))
		var cx, xr int
		switch {
		case hs == 1:
			cx = 12 + vs
		case hs == 0:
			cx = 9 + vs*vs
			if vs == -1 {
				xr = 1
			}
		default:
			cx, xr = 12-vs, 1
		}
		neg[i] = mq.decode(cx)^xr == 1
		sig[i] = true
	}
	anySig := func(x, y int) bool {
		hc, vc, dc := counts(x, y)
		return hc+vc+dc > 0
	}
	bp := numbps - 1
	kind := 2 // the first pass is a cleanup pass
	for p := 0; p < passes && bp >= 0; p++ {
		one := int32(1) << uint(bp)
		for y0 := 0; y0 < h; y0 += 4 {
			y1 := min(y0+4, h)
			for x := 0; x < w; x++ {
				y := y0
				if kind == 2 && y1-y0 == 4 {
					run := true
					for yy := y0; yy < y1 && run; yy++ {
						i := at(x, yy)
						run = !sig[i] && !visited[i] && !anySig(x, yy)
					}
					if run {
						if mq.decode(17) == 0 {
							continue
						}
						r := mq.decode(18) << 1
						r |= mq.decode(18)
						y = y0 + r
						decodeSign(x, y)
						mag[y*w+x] |= one
						y++
					}
				}
				for ; y < y1; y++ {
					i := at(x, y)
					switch kind {
					case 0: // significance propagation
						if !sig[i] && anySig(x, y) {
							if mq.decode(zc(x, y)) == 1 {
								decodeSign(x, y)
								mag[y*w+x] |= one
							}
							visited[i] = true
						}
					case 1: // magnitude refinement
						if sig[i] && !visited[i] {
							cx := 16
							if !refined[i] {
								cx = 14
								if anySig(x, y) {
									cx = 15
								}
							}
							if mq.decode(cx) == 1 {
								mag[y*w+x] |= one
							}
							refined[i] = true
						}
					case 2: // cleanup
						if !sig[i] && !visited[i] {
							if mq.decode(zc(x, y)) == 1 {
								decodeSign(x, y)
								mag[y*w+x] |= one
							}
						}
					}
				}
			}
		}
		if kind == 2 {
			clear(visited)
			bp--
			kind = 0
		} else {
			kind++
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := mag[y*w+x]
			if neg[at(x, y)] {
				v = -v
			}
			coef[y*w+x] = v
		}
	}
}

// Tag trees (B.10.2).

type j2kTagTree struct {
	w, h  []int // per level
	value [][]int
	low   [][]int
}

func newJ2KTagTree(w, h int) *j2kTagTree {
	t := &j2kTagTree{}
	for {
		t.w, t.h = append(t.w, w), append(t.h, h)
		v, l := make([]int, w*h), make([]int, w*h)
		for i := range v {
			v[i] = 1 << 30
		}
		t.value, t.low = append(t.value, v), append(t.low, l)
		if w == 1 && h == 1 {
			return t
		}
		w, h = (w+1)/2, (h+1)/2
	}
}

// decode reports whether leaf (x, y)'s value is below threshold, reading
// the bits needed to know.
func (t *j2kTagTree) decode(b *j2kBits, x, y, threshold int) bool {
	low := 0
	for lv := len(t.w) - 1; lv >= 0; lv-- {
		i := (y>>uint(lv))*t.w[lv] + x>>uint(lv)
		if low > t.low[lv][i] {
			t.low[lv][i] = low
		} else {
			low = t.low[lv][i]
		}
		for low < threshold {
			if low >= t.value[lv][i] {
				break
			}
			if b.bit() == 1 {
				t.value[lv][i] = low
				break
			}
			low++
		}
		t.low[lv][i] = low
	}
	return t.value[0][y*t.w[0]+x] < threshold
}

// Packet header bits (with the bit stuffing after 0xFF bytes).

type j2kBits struct {
	d   []byte
	pos int
	buf uint32
	ct  int
}

func (b *j2kBits) bytein() {
	b.buf = (b.buf << 8) & 0xffff
	b.ct = 8
	if b.buf == 0xff00 {
		b.ct = 7
	}
	if b.pos < len(b.d) {
		b.buf |= uint32(b.d[b.pos])
	}
	b.pos++
}

func (b *j2kBits) bit() int {
	if b.ct == 0 {
		b.bytein()
	}
	b.ct--
	return int(b.buf>>uint(b.ct)) & 1
}

func (b *j2kBits) bits(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		v = v<<1 | b.bit()
	}
	return v
}

func (b *j2kBits) align() {
	if b.buf&0xff == 0xff {
		b.bytein()
	}
	b.ct = 0
}

// The tile structure.

type j2kBlock struct {
	x0, y0, x1, y1 int // in band coordinates, relative to the band origin
	included       bool
	lblock         int
	numbps         int
	passes         int
	data           []byte
}

type j2kBand struct {
	kind           int
	x0, y0, x1, y1 int
	mb             int // maximum bit-planes
	nx, ny         int // code-blocks across and down
	blocks         []*j2kBlock
	incl, zbp      *j2kTagTree
}

type j2kRes struct {
	x0, y0, x1, y1 int
	bands          []*j2kBand
}

type j2kComp struct {
	depth int
	sgnd  bool
	res   []*j2kRes
}

func j2kCeilDiv(a, b int) int {
	if a >= 0 {
		return (a + b - 1) / b
	}
	return -((-a) / b)
}

func j2kFloorDiv(a, b int) int {
	if a >= 0 {
		return a / b
	}
	return -((-a + b - 1) / b)
}

// imageDecodeJ2K decodes a JP2 file or a raw J2K codestream.
func imageDecodeJ2K(data []byte) (img image.Image, ok bool, err error) {
	cs, isJ2K := j2kCodestream(data)
	if !isJ2K {
		return nil, false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			img, ok, err = nil, true, j2kError("malformed data")
		}
	}()
	img, err = j2kDecode(cs)
	return img, true, err
}

// j2kCodestream finds the codestream: the jp2c box of a JP2 file, or
// the data itself if it starts with SOC SIZ.
func j2kCodestream(d []byte) ([]byte, bool) {
	if len(d) >= 4 && d[0] == 0xff && d[1] == 0x4f && d[2] == 0xff && d[3] == 0x51 {
		return d, true
	}
	if len(d) < 12 || string(d[4:8]) != "jP  " {
		return nil, false
	}
	p := 0
	for p+8 <= len(d) {
		n := int(d[p])<<24 | int(d[p+1])<<16 | int(d[p+2])<<8 | int(d[p+3])
		typ := string(d[p+4 : p+8])
		hdr := 8
		switch {
		case n == 1:
			if p+16 > len(d) {
				return nil, false
			}
			n = 0
			for k := 0; k < 8; k++ {
				n = n<<8 | int(d[p+8+k])
			}
			hdr = 16
		case n == 0:
			n = len(d) - p
		}
		if n < hdr || p+n > len(d) {
			return nil, false
		}
		if typ == "jp2c" {
			return d[p+hdr : p+n], true
		}
		p += n
	}
	return nil, false
}

func j2kDecode(d []byte) (image.Image, error) {
	u16 := func(p int) int { return int(d[p])<<8 | int(d[p+1]) }
	u32 := func(p int) int { return u16(p)<<16 | u16(p+2) }
	var (
		w, h, x0, y0     int
		tw, th, tx0, ty0 int
		comps            []*j2kComp
		levels, xcb, ycb int
		cbStyle, xform   int
		layers, prog     int
		mct, scod        int
		guard            int
		expn             []int
		qstyle           int
		haveCOD, haveQCD bool
	)
	p := 2
	var tiles [][]byte
	for p+4 <= len(d) {
		m := u16(p)
		if m == 0xffd9 {
			break
		}
		n := u16(p + 2)
		seg := p + 4
		switch m {
		case 0xff51: // SIZ
			w, h, x0, y0 = u32(seg+2), u32(seg+6), u32(seg+10), u32(seg+14)
			tw, th, tx0, ty0 = u32(seg+18), u32(seg+22), u32(seg+26), u32(seg+30)
			nc := u16(seg + 34)
			if nc < 1 || nc > 4 {
				return nil, j2kError("unsupported component count")
			}
			for c := 0; c < nc; c++ {
				s := int(d[seg+36+3*c])
				if d[seg+37+3*c] != 1 || d[seg+38+3*c] != 1 {
					return nil, j2kError("subsampled components are not supported")
				}
				comps = append(comps, &j2kComp{depth: s&0x7f + 1, sgnd: s&0x80 != 0})
			}
		case 0xff52: // COD
			scod = int(d[seg])
			prog, layers, mct = int(d[seg+1]), u16(seg+2), int(d[seg+4])
			levels, xcb, ycb = int(d[seg+5]), int(d[seg+6])+2, int(d[seg+7])+2
			cbStyle, xform = int(d[seg+8]), int(d[seg+9])
			if scod&1 != 0 {
				return nil, j2kError("explicit precincts are not supported")
			}
			haveCOD = true
		case 0xff5c: // QCD
			qstyle, guard = int(d[seg])&0x1f, int(d[seg])>>5
			if qstyle == 0 {
				for k := seg + 1; k < p+2+n; k++ {
					expn = append(expn, int(d[k])>>3)
				}
			}
			haveQCD = true
		case 0xff53, 0xff5d, 0xff5e, 0xff5f, 0xff60:
			return nil, j2kError("per-component coding styles are not supported")
		case 0xff90: // SOT
			psot := u32(seg + 4)
			q := p + 2 + n
			end := len(d)
			if psot != 0 {
				end = min(p+psot, len(d))
			}
			// skip tile-part header markers up to SOD
			for q+4 <= end && u16(q) != 0xff93 {
				q += 2 + u16(q+2)
			}
			if u16(seg) != 0 {
				return nil, j2kError("multiple tiles are not supported")
			}
			tiles = append(tiles, d[q+2:end])
			p = end
			continue
		}
		p += 2 + n
	}
	if comps == nil || !haveCOD || !haveQCD || len(tiles) == 0 {
		return nil, j2kError("incomplete codestream")
	}
	if xform != 1 || qstyle != 0 || cbStyle != 0 {
		return nil, j2kError("only reversible, unquantized, style-0 code-blocks are supported")
	}
	if tx0 > x0 || ty0 > y0 || tx0+tw < w || ty0+th < h {
		return nil, j2kError("multiple tiles are not supported")
	}
	if levels > 32 || len(expn) < 3*levels+1 || layers < 1 || w <= x0 || h <= y0 || (w-x0)*(h-y0) > 1<<26 {
		return nil, j2kError("bad coding parameters")
	}
	tcx0, tcy0, tcx1, tcy1 := x0, y0, w, h
	for _, c := range comps {
		for r := 0; r <= levels; r++ {
			s := 1 << uint(levels-r)
			res := &j2kRes{x0: j2kCeilDiv(tcx0, s), y0: j2kCeilDiv(tcy0, s), x1: j2kCeilDiv(tcx1, s), y1: j2kCeilDiv(tcy1, s)}
			kinds := []int{j2kLL}
			nb := levels
			if r > 0 {
				kinds = []int{j2kHL, j2kLH, j2kHH}
				nb = levels - r + 1
			}
			for bi, k := range kinds {
				xob, yob := 0, 0
				if k == j2kHL || k == j2kHH {
					xob = 1
				}
				if k == j2kLH || k == j2kHH {
					yob = 1
				}
				bs := 1 << uint(nb)
				half := bs / 2
				b := &j2kBand{kind: k,
					x0: j2kCeilDiv(tcx0-half*xob, bs), y0: j2kCeilDiv(tcy0-half*yob, bs),
					x1: j2kCeilDiv(tcx1-half*xob, bs), y1: j2kCeilDiv(tcy1-half*yob, bs)}
				if r == 0 {
					b.x0, b.y0, b.x1, b.y1 = res.x0, res.y0, res.x1, res.y1
				}
				ei := 0
				if r > 0 {
					ei = 3*(r-1) + 1 + bi
				}
				b.mb = guard + expn[ei] - 1
				cw, ch := 1<<uint(xcb), 1<<uint(ycb)
				bx0, by0 := j2kFloorDiv(b.x0, cw), j2kFloorDiv(b.y0, ch)
				bx1, by1 := j2kCeilDiv(b.x1, cw), j2kCeilDiv(b.y1, ch)
				if b.x1 > b.x0 && b.y1 > b.y0 {
					b.nx, b.ny = bx1-bx0, by1-by0
				}
				for j := 0; j < b.ny; j++ {
					for i := 0; i < b.nx; i++ {
						blk := &j2kBlock{
							x0: max((bx0+i)*cw, b.x0) - b.x0, y0: max((by0+j)*ch, b.y0) - b.y0,
							x1: min((bx0+i+1)*cw, b.x1) - b.x0, y1: min((by0+j+1)*ch, b.y1) - b.y0,
						}
						b.blocks = append(b.blocks, blk)
					}
				}
				if b.nx > 0 {
					b.incl, b.zbp = newJ2KTagTree(b.nx, b.ny), newJ2KTagTree(b.nx, b.ny)
				}
				res.bands = append(res.bands, b)
			}
			c.res = append(c.res, res)
		}
	}
	// packets: one precinct per resolution
	type pkt struct{ l, r, c int }
	var order []pkt
	switch prog {
	case 0: // LRCP
		for l := 0; l < layers; l++ {
			for r := 0; r <= levels; r++ {
				for c := range comps {
					order = append(order, pkt{l, r, c})
				}
			}
		}
	case 1, 2: // RLCP, RPCL
		for r := 0; r <= levels; r++ {
			if prog == 1 {
				for l := 0; l < layers; l++ {
					for c := range comps {
						order = append(order, pkt{l, r, c})
					}
				}
			} else {
				for c := range comps {
					for l := 0; l < layers; l++ {
						order = append(order, pkt{l, r, c})
					}
				}
			}
		}
	case 3, 4: // PCRL, CPRL
		for c := range comps {
			for r := 0; r <= levels; r++ {
				for l := 0; l < layers; l++ {
					order = append(order, pkt{l, r, c})
				}
			}
		}
	default:
		return nil, j2kError("unknown progression order")
	}
	var body []byte
	for _, t := range tiles {
		body = append(body, t...)
	}
	pos := 0
	for _, pk := range order {
		if pos >= len(body) {
			break
		}
		if scod&2 != 0 && pos+6 <= len(body) && body[pos] == 0xff && body[pos+1] == 0x91 {
			pos += 6
		}
		res := comps[pk.c].res[pk.r]
		b := &j2kBits{d: body, pos: pos}
		type incl struct {
			blk         *j2kBlock
			passes, len int
		}
		var got []incl
		if b.bit() == 1 {
			for _, band := range res.bands {
				for bi, blk := range band.blocks {
					bx, by := bi%band.nx, bi/band.nx
					var in bool
					if !blk.included {
						in = band.incl.decode(b, bx, by, pk.l+1)
					} else {
						in = b.bit() == 1
					}
					if !in {
						continue
					}
					if !blk.included {
						i := 1
						for !band.zbp.decode(b, bx, by, i) {
							i++
							if i > 64 {
								return nil, j2kError("bad zero bit-plane count")
							}
						}
						blk.numbps = band.mb - (i - 1)
						blk.included, blk.lblock = true, 3
					}
					np := 1
					switch {
					case b.bit() == 0:
					case b.bit() == 0:
						np = 2
					default:
						if v := b.bits(2); v != 3 {
							np = 3 + v
						} else if v := b.bits(5); v != 31 {
							np = 6 + v
						} else {
							np = 37 + b.bits(7)
						}
					}
					for b.bit() == 1 {
						blk.lblock++
					}
					lg := 0
					for 1<<uint(lg+1) <= np {
						lg++
					}
					n := b.bits(blk.lblock + lg)
					got = append(got, incl{blk, np, n})
				}
			}
		}
		b.align()
		pos = b.pos
		if scod&4 != 0 && pos+2 <= len(body) && body[pos] == 0xff && body[pos+1] == 0x92 {
			pos += 2
		}
		for _, g := range got {
			end := min(pos+g.len, len(body))
			g.blk.data = append(g.blk.data, body[pos:end]...)
			g.blk.passes += g.passes
			pos = end
		}
	}
	// tier-1 and the inverse wavelet transform, per component
	W, H := tcx1-tcx0, tcy1-tcy0
	planes := make([][]int32, len(comps))
	for ci, c := range comps {
		a := make([]int32, W*H)
		for r, res := range c.res {
			var lw, lh int
			if r > 0 {
				prev := c.res[r-1]
				lw, lh = prev.x1-prev.x0, prev.y1-prev.y0
			}
			for _, band := range res.bands {
				ox, oy := 0, 0
				if band.kind == j2kHL || band.kind == j2kHH {
					ox = lw
				}
				if band.kind == j2kLH || band.kind == j2kHH {
					oy = lh
				}
				for _, blk := range band.blocks {
					bw, bh := blk.x1-blk.x0, blk.y1-blk.y0
					coef := make([]int32, bw*bh)
					j2kDecodeBlock(blk.data, bw, bh, blk.numbps, blk.passes, band.kind, coef)
					for y := 0; y < bh; y++ {
						copy(a[(oy+blk.y0+y)*W+ox+blk.x0:], coef[y*bw:(y+1)*bw])
					}
				}
			}
		}
		for r := 1; r <= levels; r++ {
			res, prev := c.res[r], c.res[r-1]
			rw, rh := res.x1-res.x0, res.y1-res.y0
			lw, lh := prev.x1-prev.x0, prev.y1-prev.y0
			line := make([]int32, max(rw, rh))
			for y := 0; y < rh; y++ {
				row := a[y*W : y*W+rw]
				j2kIDWT53(row, lw, res.x0&1, line)
			}
			col := make([]int32, rh)
			for x := 0; x < rw; x++ {
				for y := 0; y < rh; y++ {
					col[y] = a[y*W+x]
				}
				j2kIDWT53(col, lh, res.y0&1, line)
				for y := 0; y < rh; y++ {
					a[y*W+x] = col[y]
				}
			}
		}
		planes[ci] = a
	}
	if mct == 1 && len(comps) >= 3 {
		y0p, y1p, y2p := planes[0], planes[1], planes[2]
		for i := range y0p {
			g := y0p[i] - (y1p[i]+y2p[i])>>2
			r, b := y2p[i]+g, y1p[i]+g
			y0p[i], y1p[i], y2p[i] = r, g, b
		}
	}
	to8 := func(c *j2kComp, v int32) uint8 {
		if !c.sgnd {
			v += 1 << uint(c.depth-1)
		}
		mx := int32(1)<<uint(c.depth) - 1
		v = min(max(v, 0), mx)
		if c.depth > 8 {
			v >>= uint(c.depth - 8)
		} else if c.depth < 8 {
			v = v * 255 / mx
		}
		return uint8(v)
	}
	rect := image.Rect(0, 0, W, H)
	if len(comps) < 3 {
		g := image.NewGray(rect)
		for i, v := range planes[0] {
			g.Pix[i] = to8(comps[0], v)
		}
		return g, nil
	}
	out := image.NewNRGBA(rect)
	for i := 0; i < W*H; i++ {
		out.Pix[4*i] = to8(comps[0], planes[0][i])
		out.Pix[4*i+1] = to8(comps[1], planes[1][i])
		out.Pix[4*i+2] = to8(comps[2], planes[2][i])
		out.Pix[4*i+3] = 255
		if len(comps) == 4 {
			out.Pix[4*i+3] = to8(comps[3], planes[3][i])
		}
	}
	return out, nil
}

// j2kIDWT53 inverts one level of the reversible 5/3 transform in place:
// s holds nl low-pass then the high-pass coefficients; cas is the parity
// of the signal's first coordinate (1: it starts with a high sample).
func j2kIDWT53(s []int32, nl, cas int, line []int32) {
	n := len(s)
	if n == 1 {
		if cas == 1 {
			s[0] /= 2
		}
		return
	}
	x := line[:n]
	li, hi := 0, nl
	for j := 0; j < n; j++ {
		if (j+cas)%2 == 0 {
			x[j] = s[li]
			li++
		} else {
			x[j] = s[hi]
			hi++
		}
	}
	get := func(j int) int32 {
		if j < 0 {
			j = -j
		}
		if j >= n {
			j = 2*(n-1) - j
		}
		return x[j]
	}
	for j := 0; j < n; j++ {
		if (j+cas)%2 == 0 {
			x[j] -= (get(j-1) + get(j+1) + 2) >> 2
		}
	}
	for j := 0; j < n; j++ {
		if (j+cas)%2 == 1 {
			x[j] += (get(j-1) + get(j+1)) >> 1
		}
	}
	copy(s, x)
}
