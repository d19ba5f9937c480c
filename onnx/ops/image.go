package ops

import (
	"bytes"
	"image"
	"image/color"
	_ "image/gif" // registers the GIF decoder
	_ "image/jpeg"
	_ "image/png"
	"strconv"

	_ "golang.org/x/image/bmp" // registers the BMP decoder
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// ImageDecoder decodes on the host with Go's image decoders (PNG, JPEG,
// GIF, BMP, TIFF, WebP) and a small PNM reader. JPEG pixels may differ
// in the last bits from libjpeg's (another IDCT and chroma upsampling).

func init() {
	Register(Op{Name: "ImageDecoder", Since: 20, Host: hostImageDecoder})
}

func hostImageDecoder(h *HostCtx) error {
	x := h.Tensor(0)
	if x == nil || x.IsString() || x.Lit.DType() != hlo.U8 {
		return h.Errorf("input must be a uint8 tensor")
	}
	data, ok := x.Lit.Data().([]uint8)
	if !ok {
		return h.Errorf("input must be a uint8 tensor")
	}
	format := h.Node.Str("pixel_format", "RGB")
	if format != "RGB" && format != "BGR" && format != "Grayscale" {
		return h.Errorf("unknown pixel_format %q", format)
	}
	img, kind, err := imageDecode(data)
	if err != nil {
		return h.Errorf("decoding the image: %v", err)
	}
	if yc, ok := img.(*image.YCbCr); ok && kind == "webp" && yc.SubsampleRatio == image.YCbCrSubsampleRatio420 {
		img = imageWebPToRGB(yc)
	}
	if yc, ok := img.(*image.YCbCr); ok && kind == "jpeg" {
		if rgb := imageJPEGToRGB(yc); rgb != nil {
			img = rgb
		}
	}
	bd := img.Bounds()
	w, ht := bd.Dx(), bd.Dy()
	ch := 3
	if format == "Grayscale" {
		ch = 1
	}
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.U8, int64(ht), int64(w), int64(ch)))
	px := out.Data().([]uint8)
	for y := 0; y < ht; y++ {
		for xx := 0; xx < w; xx++ {
			r, g, b := imageRGB(img, bd.Min.X+xx, bd.Min.Y+y)
			o := (y*w + xx) * ch
			switch format {
			case "RGB":
				px[o], px[o+1], px[o+2] = r, g, b
			case "BGR":
				px[o], px[o+1], px[o+2] = b, g, r
			default:
				if gi, ok := img.(*image.Gray); ok {
					px[o] = gi.GrayAt(bd.Min.X+xx, bd.Min.Y+y).Y
				} else {
					// ITU-R 601-2 luma, as PIL's convert("L")
					px[o] = uint8((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
				}
			}
		}
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}

// imageRGB is the 8-bit RGB of a pixel (alpha dropped, not
// premultiplied).
func imageRGB(img image.Image, x, y int) (r, g, b uint8) {
	switch m := img.(type) {
	case *image.YCbCr:
		c := m.YCbCrAt(x, y)
		return color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
	case *image.Gray:
		v := m.GrayAt(x, y).Y
		return v, v, v
	case *image.RGBA:
		c := m.RGBAAt(x, y)
		if c.A == 255 {
			return c.R, c.G, c.B
		}
	case *image.NRGBA:
		c := m.NRGBAAt(x, y)
		return c.R, c.G, c.B
	}
	c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
	return c.R, c.G, c.B
}

// imageDecode decodes any registered format, or PNM (P2, P3, P5, P6).
func imageDecode(data []byte) (image.Image, string, error) {
	if len(data) >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' {
		img, err := imageDecodePNM(data)
		return img, "pnm", err
	}
	if img, ok, err := imageDecodeJPEG(data); ok && err == nil {
		return img, "jpeg", nil
	}
	if img, ok, err := imageDecodeJ2K(data); ok {
		return img, "jpeg2000", err
	}
	return image.Decode(bytes.NewReader(data))
}

// imageWebPToRGB converts a lossy WebP's 4:2:0 planes to RGB the way
// libwebp does: "fancy" chroma upsampling (each output pixel mixes the
// nearest chroma samples 9:3:3:1, through libwebp's integer diagonal
// averages) and its 14-bit fixed-point BT.601 conversion.
func imageWebPToRGB(m *image.YCbCr) *image.NRGBA {
	b := m.Bounds()
	w, ht := b.Dx(), b.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, ht))
	cw, chh := (w+1)/2, (ht+1)/2
	crow := func(plane []uint8, r int) []uint8 {
		r = min(max(r, 0), chh-1)
		return plane[r*m.CStride : r*m.CStride+cw]
	}
	us, vs := make([]int, w), make([]int, w)
	for y := 0; y < ht; y++ {
		near := y / 2
		far := near - 1
		if y%2 == 1 {
			far = near + 1
		}
		imageFancyRow(us, crow(m.Cb, near), crow(m.Cb, far), w)
		imageFancyRow(vs, crow(m.Cr, near), crow(m.Cr, far), w)
		yrow := m.Y[y*m.YStride:]
		dst := out.Pix[y*out.Stride:]
		for x := 0; x < w; x++ {
			yy, u, v := int(yrow[x]), us[x], vs[x]
			dst[4*x] = imageClip8(imageMultHi(yy, 19077) + imageMultHi(v, 26149) - 14234)
			dst[4*x+1] = imageClip8(imageMultHi(yy, 19077) - imageMultHi(u, 6419) - imageMultHi(v, 13320) + 8708)
			dst[4*x+2] = imageClip8(imageMultHi(yy, 19077) + imageMultHi(u, 33050) - 17685)
			dst[4*x+3] = 255
		}
	}
	return out
}

func imageMultHi(v, c int) int { return (v * c) >> 8 }

func imageClip8(v int) uint8 {
	switch {
	case v&^(256<<6-1) == 0:
		return uint8(v >> 6)
	case v < 0:
		return 0
	}
	return 255
}

// imageFancyRow upsamples one chroma row pair horizontally into dst (w
// samples): n is the nearer chroma row, f the farther one.
func imageFancyRow(dst []int, n, f []uint8, w int) {
	dst[0] = (3*int(n[0]) + int(f[0]) + 2) >> 2
	last := (w - 1) >> 1
	for k := 1; k <= last; k++ {
		tl, t, l, c := int(n[k-1]), int(n[k]), int(f[k-1]), int(f[k])
		avg := tl + t + l + c + 8
		d12 := (avg + 2*(t+l)) >> 3
		d03 := (avg + 2*(tl+c)) >> 3
		dst[2*k-1] = (d12 + tl) >> 1
		dst[2*k] = (d03 + t) >> 1
	}
	if w%2 == 0 {
		dst[w-1] = (3*int(n[last]) + int(f[last]) + 2) >> 2
	}
}

type imageError string

func (e imageError) Error() string { return string(e) }

func imageDecodePNM(data []byte) (image.Image, error) {
	kind := data[1]
	if kind == '1' || kind == '4' {
		return nil, imageError("PBM bitmaps are not supported")
	}
	pos := 2
	// header fields: width, height, maxval, separated by whitespace and
	// comments
	field := func() (int, error) {
		for pos < len(data) {
			c := data[pos]
			if c == '#' {
				for pos < len(data) && data[pos] != '\n' {
					pos++
				}
				continue
			}
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
				pos++
				continue
			}
			break
		}
		start := pos
		for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
			pos++
		}
		if start == pos {
			return 0, imageError("bad PNM header")
		}
		return strconv.Atoi(string(data[start:pos]))
	}
	w, err := field()
	if err != nil {
		return nil, err
	}
	ht, err := field()
	if err != nil {
		return nil, err
	}
	maxv, err := field()
	if err != nil {
		return nil, err
	}
	if w <= 0 || ht <= 0 || maxv <= 0 || maxv > 65535 || w > 1<<16 || ht > 1<<16 {
		return nil, imageError("bad PNM size or maxval")
	}
	ch := 3
	if kind == '2' || kind == '5' {
		ch = 1
	}
	n := w * ht * ch
	vals := make([]int, n)
	if kind == '5' || kind == '6' {
		pos++ // the single whitespace after maxval
		bpv := 1
		if maxv > 255 {
			bpv = 2
		}
		if pos+n*bpv > len(data) {
			return nil, imageError("truncated PNM data")
		}
		for i := range vals {
			if bpv == 1 {
				vals[i] = int(data[pos+i])
			} else {
				vals[i] = int(data[pos+2*i])<<8 | int(data[pos+2*i+1])
			}
		}
	} else {
		for i := range vals {
			if vals[i], err = field(); err != nil {
				return nil, err
			}
		}
	}
	scale := func(v int) uint8 { return uint8(min(v, maxv) * 255 / maxv) }
	if ch == 1 {
		img := image.NewGray(image.Rect(0, 0, w, ht))
		for i, v := range vals {
			img.Pix[i] = scale(v)
		}
		return img, nil
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, ht))
	for i := 0; i < w*ht; i++ {
		img.Pix[4*i] = scale(vals[3*i])
		img.Pix[4*i+1] = scale(vals[3*i+1])
		img.Pix[4*i+2] = scale(vals[3*i+2])
		img.Pix[4*i+3] = 255
	}
	return img, nil
}

// imageJPEGToRGB converts a JPEG's planes to RGB the way libjpeg does by
// default: "fancy" (triangle-filter) upsampling of 2x subsampled chroma
// and its table-driven fixed-point YCbCr conversion.
func imageJPEGToRGB(m *image.YCbCr) *image.NRGBA {
	b := m.Bounds()
	w, ht := b.Dx(), b.Dy()
	hs, vs := 1, 1
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio444:
	case image.YCbCrSubsampleRatio422:
		hs = 2
	case image.YCbCrSubsampleRatio420:
		hs, vs = 2, 2
	case image.YCbCrSubsampleRatio440:
		vs = 2
	default:
		return nil
	}
	cw, chh := (w+hs-1)/hs, (ht+vs-1)/vs
	up := func(plane []uint8) []int {
		out := make([]int, w*ht)
		at := func(x, y int) int {
			x, y = min(max(x, 0), cw-1), min(max(y, 0), chh-1)
			return int(plane[y*m.CStride+x])
		}
		row := make([]int, cw)
		for y := 0; y < ht; y++ {
			cy := y / vs
			if vs == 2 {
				other := cy - 1
				if y%2 == 1 {
					other = cy + 1
				}
				for x := 0; x < cw; x++ {
					row[x] = 3*at(x, cy) + at(x, other)
				}
			} else {
				for x := 0; x < cw; x++ {
					row[x] = at(x, cy)
				}
			}
			for x := 0; x < w; x++ {
				cx := x / hs
				var v int
				switch {
				case hs == 2 && vs == 2:
					this := row[cx]
					if x%2 == 0 {
						last := row[max(cx-1, 0)]
						v = (this*3 + last + 8) >> 4
					} else {
						next := row[min(cx+1, cw-1)]
						v = (this*3 + next + 7) >> 4
					}
				case hs == 2:
					this := row[cx]
					if x%2 == 0 {
						v = (this*3 + row[max(cx-1, 0)] + 1) >> 2
					} else {
						v = (this*3 + row[min(cx+1, cw-1)] + 2) >> 2
					}
				case vs == 2:
					v = (row[cx] + 1) >> 2
					if y%2 == 1 {
						v = (row[cx] + 2) >> 2
					}
				default:
					v = row[cx]
				}
				out[y*w+x] = v
			}
		}
		return out
	}
	cb, cr := up(m.Cb), up(m.Cr)
	out := image.NewNRGBA(image.Rect(0, 0, w, ht))
	const one = 1 << 16
	fix := func(f float64) int { return int(f*one + 0.5) }
	clip := func(v int) uint8 { return uint8(min(max(v, 0), 255)) }
	for y := 0; y < ht; y++ {
		for x := 0; x < w; x++ {
			yy := int(m.Y[y*m.YStride+x])
			u, v := cb[y*w+x]-128, cr[y*w+x]-128
			r := yy + ((fix(1.40200)*v + one/2) >> 16)
			g := yy + ((-fix(0.34414)*u + one/2 - fix(0.71414)*v) >> 16)
			bb := yy + ((fix(1.77200)*u + one/2) >> 16)
			o := y*out.Stride + 4*x
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = clip(r), clip(g), clip(bb), 255
		}
	}
	return out
}
