package ops

import (
	"image"
)

// A baseline JPEG decoder that reconstructs samples exactly as libjpeg
// does by default (the "islow" integer IDCT), so that ImageDecoder's
// output matches the reference's bit for bit. Progressive and other
// JPEG flavours fall back to Go's decoder.

type imageJPEGError string

func (e imageJPEGError) Error() string { return "jpeg: " + string(e) }

// imageZigzag maps zigzag order to natural (row-major) order.
var imageZigzag = [64]int{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

type imageHuff struct {
	// codes by length: for length l (1..16), the first code, the count,
	// and the index of its first symbol.
	first, count, index [17]int
	syms                []uint8
	set                 bool
}

type imageJPEGComp struct {
	id, h, v, tq int
	bw, bh       int     // blocks per row and column (padded to whole MCUs)
	pix          []uint8 // bw*8 x bh*8 samples
	td, ta       int
	pred         int
}

type imageJPEGDec struct {
	data     []byte
	pos      int
	bits     uint32
	nbits    int
	q        [4][64]int
	dc, ac   [4]imageHuff
	comps    []*imageJPEGComp
	w, h     int
	hmax     int
	vmax     int
	restart  int
	frameSet bool
}

func (d *imageJPEGDec) u16(p int) int { return int(d.data[p])<<8 | int(d.data[p+1]) }

// imageDecodeJPEG decodes a baseline JPEG; ok false means "not handled
// here" (progressive, 12-bit, arithmetic coding, odd sampling...).
func imageDecodeJPEG(data []byte) (img image.Image, ok bool, err error) {
	defer func() {
		if r := recover(); r != nil { // malformed data indexing past the end
			img, ok, err = nil, true, imageJPEGError("malformed data")
		}
	}()
	d := &imageJPEGDec{data: data}
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return nil, false, nil
	}
	p := 2
	for {
		if p+2 > len(data) {
			return nil, true, imageJPEGError("no end of image")
		}
		if data[p] != 0xff {
			return nil, true, imageJPEGError("marker expected")
		}
		m := data[p+1]
		if m == 0xff {
			p++
			continue
		}
		if m == 0xd9 {
			break
		}
		if m >= 0xd0 && m <= 0xd7 || m == 0x01 {
			p += 2
			continue
		}
		if p+4 > len(data) {
			return nil, true, imageJPEGError("truncated segment")
		}
		n := d.u16(p + 2)
		if n < 2 || p+2+n > len(data) {
			return nil, true, imageJPEGError("bad segment length")
		}
		seg := p + 4
		end := p + 2 + n
		switch {
		case m == 0xc0 || m == 0xc1:
			if err := d.frame(seg, end); err != nil {
				return nil, true, err
			}
		case m >= 0xc2 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc:
			return nil, false, nil // progressive, lossless, arithmetic
		case m == 0xc4:
			if err := d.huffTables(seg, end); err != nil {
				return nil, true, err
			}
		case m == 0xdb:
			if err := d.quantTables(seg, end); err != nil {
				return nil, true, err
			}
		case m == 0xdd:
			d.restart = d.u16(seg)
		case m == 0xda:
			np, err := d.scan(seg, end)
			if err != nil {
				return nil, true, err
			}
			p = np
			continue
		}
		p = end
	}
	if !d.frameSet {
		return nil, true, imageJPEGError("no frame")
	}
	return d.image()
}

func (d *imageJPEGDec) frame(p, end int) error {
	if d.data[p] != 8 {
		return imageJPEGError("only 8-bit samples")
	}
	d.h, d.w = d.u16(p+1), d.u16(p+3)
	nc := int(d.data[p+5])
	if d.w <= 0 || d.h <= 0 || (nc != 1 && nc != 3) || p+6+3*nc > end {
		return imageJPEGError("unsupported frame")
	}
	d.hmax, d.vmax = 1, 1
	for i := 0; i < nc; i++ {
		q := p + 6 + 3*i
		c := &imageJPEGComp{id: int(d.data[q]), h: int(d.data[q+1] >> 4), v: int(d.data[q+1] & 15), tq: int(d.data[q+2] & 3)}
		if c.h < 1 || c.h > 2 || c.v < 1 || c.v > 2 {
			return imageJPEGError("unsupported sampling")
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
		d.comps = append(d.comps, c)
	}
	if nc == 1 {
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
	}
	mx := (d.w + 8*d.hmax - 1) / (8 * d.hmax)
	my := (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	for _, c := range d.comps {
		c.bw, c.bh = mx*c.h, my*c.v
		c.pix = make([]uint8, c.bw*8*c.bh*8)
	}
	d.frameSet = true
	return nil
}

func (d *imageJPEGDec) huffTables(p, end int) error {
	for p < end {
		tc, th := int(d.data[p]>>4), int(d.data[p]&15)
		if tc > 1 || th > 3 || p+17 > end {
			return imageJPEGError("bad huffman table")
		}
		var t imageHuff
		total := 0
		code := 0
		for l := 1; l <= 16; l++ {
			n := int(d.data[p+l])
			t.first[l], t.count[l], t.index[l] = code, n, total
			total += n
			code = (code + n) << 1
		}
		if p+17+total > end {
			return imageJPEGError("bad huffman table")
		}
		t.syms = append([]uint8(nil), d.data[p+17:p+17+total]...)
		t.set = true
		if tc == 0 {
			d.dc[th] = t
		} else {
			d.ac[th] = t
		}
		p += 17 + total
	}
	return nil
}

func (d *imageJPEGDec) quantTables(p, end int) error {
	for p < end {
		pq, tq := int(d.data[p]>>4), int(d.data[p]&3)
		p++
		for k := 0; k < 64; k++ {
			if pq == 0 {
				d.q[tq][k] = int(d.data[p+k])
			} else {
				d.q[tq][k] = d.u16(p + 2*k)
			}
		}
		p += 64 * (pq + 1)
	}
	return nil
}

// bit reads one bit of entropy-coded data (zeros past a marker).
func (d *imageJPEGDec) bit() int {
	if d.nbits == 0 {
		b := uint32(0)
		if d.pos < len(d.data) {
			b = uint32(d.data[d.pos])
			if b == 0xff {
				nx := byte(0)
				if d.pos+1 < len(d.data) {
					nx = d.data[d.pos+1]
				}
				if nx == 0 {
					d.pos += 2
				} else {
					b = 0 // a marker: feed zeros, stay put
				}
			} else {
				d.pos++
			}
		}
		d.bits, d.nbits = b, 8
	}
	d.nbits--
	return int(d.bits>>uint(d.nbits)) & 1
}

func (d *imageJPEGDec) receive(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		v = v<<1 | d.bit()
	}
	return v
}

func imageExtend(v, n int) int {
	if n > 0 && v < 1<<(n-1) {
		return v - (1 << n) + 1
	}
	return v
}

func (d *imageJPEGDec) decodeHuff(t *imageHuff) (int, error) {
	code := 0
	for l := 1; l <= 16; l++ {
		code = code<<1 | d.bit()
		if c := code - t.first[l]; c >= 0 && c < t.count[l] {
			return int(t.syms[t.index[l]+c]), nil
		}
	}
	return 0, imageJPEGError("bad huffman code")
}

func (d *imageJPEGDec) scan(p, end int) (int, error) {
	if !d.frameSet {
		return 0, imageJPEGError("scan before frame")
	}
	ns := int(d.data[p])
	if ns < 1 || p+1+2*ns+3 > end {
		return 0, imageJPEGError("bad scan header")
	}
	var sc []*imageJPEGComp
	for i := 0; i < ns; i++ {
		id := int(d.data[p+1+2*i])
		var c *imageJPEGComp
		for _, fc := range d.comps {
			if fc.id == id {
				c = fc
			}
		}
		if c == nil {
			return 0, imageJPEGError("scan of an unknown component")
		}
		c.td, c.ta = int(d.data[p+2+2*i]>>4)&3, int(d.data[p+2+2*i]&15)&3
		if !d.dc[c.td].set || !d.ac[c.ta].set {
			return 0, imageJPEGError("missing huffman table")
		}
		c.pred = 0
		sc = append(sc, c)
	}
	d.pos, d.nbits = end, 0
	var mx, my int
	if len(sc) == 1 {
		c := sc[0]
		cw := (d.w*c.h + d.hmax - 1) / d.hmax
		ch := (d.h*c.v + d.vmax - 1) / d.vmax
		mx, my = (cw+7)/8, (ch+7)/8
	} else {
		mx = (d.w + 8*d.hmax - 1) / (8 * d.hmax)
		my = (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	}
	var blk [64]int
	n := 0
	for y := 0; y < my; y++ {
		for x := 0; x < mx; x++ {
			if d.restart > 0 && n > 0 && n%d.restart == 0 {
				// skip to the RST marker after the padded bits
				d.nbits = 0
				for d.pos+1 < len(d.data) && !(d.data[d.pos] == 0xff && d.data[d.pos+1] >= 0xd0 && d.data[d.pos+1] <= 0xd7) {
					d.pos++
				}
				d.pos += 2
				for _, c := range sc {
					c.pred = 0
				}
			}
			n++
			for _, c := range sc {
				bh, bv := c.h, c.v
				if len(sc) == 1 {
					bh, bv = 1, 1
				}
				for by := 0; by < bv; by++ {
					for bx := 0; bx < bh; bx++ {
						if err := d.block(c, &blk); err != nil {
							return 0, err
						}
						col, row := x*bh+bx, y*bv+by
						if col < c.bw && row < c.bh {
							imageIDCTIslow(&blk, &d.q[c.tq], c.pix[row*8*c.bw*8+col*8:], c.bw*8)
						}
					}
				}
			}
		}
	}
	// continue after the entropy-coded data: the next marker
	q := d.pos
	for q+1 < len(d.data) && !(d.data[q] == 0xff && d.data[q+1] != 0 && !(d.data[q+1] >= 0xd0 && d.data[q+1] <= 0xd7)) {
		q++
	}
	return q, nil
}

// block decodes one 8x8 block's coefficients, in zigzag order.
func (d *imageJPEGDec) block(c *imageJPEGComp, blk *[64]int) error {
	*blk = [64]int{}
	s, err := d.decodeHuff(&d.dc[c.td])
	if err != nil {
		return err
	}
	if s > 16 {
		return imageJPEGError("bad DC size")
	}
	c.pred += imageExtend(d.receive(s), s)
	blk[0] = c.pred
	for k := 1; k < 64; {
		rs, err := d.decodeHuff(&d.ac[c.ta])
		if err != nil {
			return err
		}
		r, s := rs>>4, rs&15
		if s == 0 {
			if r != 15 {
				break
			}
			k += 16
			continue
		}
		k += r
		if k > 63 {
			return imageJPEGError("bad AC run")
		}
		blk[k] = imageExtend(d.receive(s), s)
		k++
	}
	return nil
}

// imageIDCTIslow is libjpeg's accurate integer inverse DCT (the
// Loeffler-Ligtenberg-Moschytz algorithm with 13-bit constants): blk in
// zigzag order, q the quantization table in zigzag order; it writes 8
// rows of 8 samples at out with the given stride.
func imageIDCTIslow(blk *[64]int, q *[64]int, out []uint8, stride int) {
	const (
		constBits = 13
		pass1Bits = 2
		f0298     = 2446
		f0390     = 3196
		f0541     = 4433
		f0765     = 6270
		f0899     = 7373
		f1175     = 9633
		f1501     = 12299
		f1847     = 15137
		f1961     = 16069
		f2053     = 16819
		f2562     = 20995
		f3072     = 25172
	)
	var in, ws [64]int
	for k := 0; k < 64; k++ {
		in[imageZigzag[k]] = blk[k] * q[k]
	}
	descale := func(x, n int) int { return (x + 1<<(n-1)) >> n }
	// one 1-D pass over 8 values at v[0], v[step], ...; returns the 8
	// outputs before descaling.
	oned := func(v0, v1, v2, v3, v4, v5, v6, v7 int) [8]int {
		z1 := (v2 + v6) * f0541
		tmp2 := z1 - v6*f1847
		tmp3 := z1 + v2*f0765
		tmp0 := (v0 + v4) << constBits
		tmp1 := (v0 - v4) << constBits
		t10, t13 := tmp0+tmp3, tmp0-tmp3
		t11, t12 := tmp1+tmp2, tmp1-tmp2
		o0, o1, o2, o3 := v7, v5, v3, v1
		z1 = o0 + o3
		z2 := o1 + o2
		z3 := o0 + o2
		z4 := o1 + o3
		z5 := (z3 + z4) * f1175
		o0 *= f0298
		o1 *= f2053
		o2 *= f3072
		o3 *= f1501
		z1 *= -f0899
		z2 *= -f2562
		z3 = z3*-f1961 + z5
		z4 = z4*-f0390 + z5
		o0 += z1 + z3
		o1 += z2 + z4
		o2 += z2 + z3
		o3 += z1 + z4
		return [8]int{t10 + o3, t11 + o2, t12 + o1, t13 + o0, t13 - o0, t12 - o1, t11 - o2, t10 - o3}
	}
	for c := 0; c < 8; c++ {
		r := oned(in[c], in[8+c], in[16+c], in[24+c], in[32+c], in[40+c], in[48+c], in[56+c])
		for i := 0; i < 8; i++ {
			ws[i*8+c] = descale(r[i], constBits-pass1Bits)
		}
	}
	for rr := 0; rr < 8; rr++ {
		w := ws[rr*8 : rr*8+8]
		r := oned(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])
		for i := 0; i < 8; i++ {
			v := descale(r[i], constBits+pass1Bits+3) + 128
			out[rr*stride+i] = uint8(min(max(v, 0), 255))
		}
	}
}

// image builds the decoded image: Gray, or YCbCr with the frame's
// subsampling (ok false for sampling Go's YCbCr cannot describe).
func (d *imageJPEGDec) image() (image.Image, bool, error) {
	r := image.Rect(0, 0, d.w, d.h)
	if len(d.comps) == 1 {
		c := d.comps[0]
		g := image.NewGray(r)
		for y := 0; y < d.h; y++ {
			copy(g.Pix[y*g.Stride:y*g.Stride+d.w], c.pix[y*c.bw*8:])
		}
		return g, true, nil
	}
	y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
	if cb.h != cr.h || cb.v != cr.v || y.h != d.hmax || y.v != d.vmax {
		return nil, false, nil
	}
	var ratio image.YCbCrSubsampleRatio
	switch [2]int{d.hmax / cb.h, d.vmax / cb.v} {
	case [2]int{1, 1}:
		ratio = image.YCbCrSubsampleRatio444
	case [2]int{2, 1}:
		ratio = image.YCbCrSubsampleRatio422
	case [2]int{2, 2}:
		ratio = image.YCbCrSubsampleRatio420
	case [2]int{1, 2}:
		ratio = image.YCbCrSubsampleRatio440
	default:
		return nil, false, nil
	}
	m := image.NewYCbCr(r, ratio)
	for row := 0; row < d.h; row++ {
		copy(m.Y[row*m.YStride:row*m.YStride+d.w], y.pix[row*y.bw*8:])
	}
	cw := (d.w*cb.h + d.hmax - 1) / d.hmax
	ch := (d.h*cb.v + d.vmax - 1) / d.vmax
	for row := 0; row < ch; row++ {
		copy(m.Cb[row*m.CStride:row*m.CStride+cw], cb.pix[row*cb.bw*8:])
		copy(m.Cr[row*m.CStride:row*m.CStride+cw], cr.pix[row*cr.bw*8:])
	}
	return m, true, nil
}
