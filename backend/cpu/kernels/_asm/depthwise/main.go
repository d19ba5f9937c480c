// Command depthwise generates the AVX-512 and AVX2 kernels of package
// kernels' channels-last depthwise convolution (conv_depthwise_amd64.s).
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	depthwiseRun("depthwiseRun512", avx512, false)
	depthwiseRun("depthwiseRun256", avx2, false)
	depthwiseRun("depthwiseRun256o", avx2, true)
	Generate()
}

// isa is what a kernel's vectors are: their width in bytes, whether the
// last vector of a pixel is masked (AVX-512), and the numbers of vectors
// a one-pixel loop may take at a time short of four.
type isa struct {
	width  int
	masked bool
	vecs   []int
	doc    string
}

var (
	avx512 = isa{width: 64, masked: true, vecs: []int{1, 2}, doc: "(ntaps >= 1)"}
	// AVX2 has no masks: its kernel takes channels in whole 8-lane
	// vectors only, and a one-pixel loop never takes more vectors than
	// are left.
	avx2 = isa{width: 32, vecs: []int{1, 2, 3}, doc: "(ntaps >= 1, c a positive multiple of 8; AVX2)"}
)

func (w isa) lanes() int { return w.width / 4 }

func (w isa) vec() reg.VecVirtual {
	if w.masked {
		return ZMM()
	}
	return YMM()
}

// depthwiseRun emits the kernel of a run of output pixels whose windows
// share one list of taps (an output row's interior, or one border pixel):
//
//	out[p·c + ch] = Σ_t in[p·ps + ioffs[t] + ch] · w[woffs[t] + ch]
//
// for p < npix and ch < c, each product rounded and then added, taps in
// order from zero (VMULPS then VADDPS, no fusing), so every lane gets the
// bits of the Go loop, at either width. Eight pixels go at a time (then
// four, then one), one vector of each, so one weight load serves eight
// products and eight independent sums hide the adds' latency. With
// AVX-512 the last vector of a pixel is masked, which is also how fewer
// than 16 channels are read and written without touching the next
// pixel's; the AVX2 kernel (one call a run of pixels where AVX2 called a
// one-pixel kernel per pixel: a MobileNet's 8-channel 3×3 layers spent
// 33 ns a pixel, mostly in the calls) takes whole vectors.
func depthwiseRun(name string, w isa, ops bool) {
	sig := "func(out, in, w *float32, ioffs, woffs *int, ntaps, npix, ps, c int)"
	doc := fmt.Sprintf("%s sets out[p*c+ch] to the sum over taps t < ntaps of in[p*ps+ioffs[t]+ch]*w[woffs[t]+ch] for p < npix, ch < c %s.", name, w.doc)
	if ops {
		sig = "func(out, in, w *float32, ioffs, woffs *int, ntaps, npix, ps, c int, bias *float32, flags int, floor, ceil float32)"
		doc += " Before storing a sum it finishes it with flags' ops, in this order: plus bias[ch] (1; bias first: 2), at least floor (16: MAXPS with floor first), at most ceil (128: MINPS with ceil first)."
	}
	TEXT(name, NOSPLIT, sig)
	Pragma("noescape")
	Doc(doc)
	withOps = ops
	out := Load(Param("out"), GP64())
	in := Load(Param("in"), GP64())
	npix := Load(Param("npix"), GP64())
	ps := Load(Param("ps"), GP64())
	SHLQ(U8(2), ps)
	block(name, w, 8, 1, out, in, npix, ps)
	block(name, w, 4, 1, out, in, npix, ps)
	// The last pixels one at a time, several vectors of each at once
	// (up to four), so that as many sums are in flight.
	c := Load(Param("c"), GP64())
	for _, v := range w.vecs {
		CMPQ(c, U32(v*w.lanes()))
		JBE(LabelRef(fmt.Sprintf("%s_v%d", name, v)))
	}
	block(name, w, 1, 4, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	for i := len(w.vecs) - 1; i >= 0; i-- {
		Label(fmt.Sprintf("%s_v%d", name, w.vecs[i]))
		block(name, w, 1, w.vecs[i], out, in, npix, ps)
		if i > 0 {
			JMP(LabelRef(name + "_end"))
		}
	}
	Label(name + "_end")
	VZEROUPPER()
	RET()
}

// block emits the loop over groups of pixels pixels while npix has that
// many left, vecs vectors of channels of each at a time, advancing in,
// out and npix. Without masks, the vectors of a pixel that are fewer
// than vecs go one at a time.
func block(name string, w isa, pixels, vecs int, out, in, npix, ps reg.Register) {
	label := fmt.Sprintf("%s_p%dv%d", name, pixels, vecs)
	Label(label)
	CMPQ(npix, U32(pixels))
	JB(LabelRef(label + "_done"))
	cv := GP64() // byte offset of the first vector of channels
	XORQ(cv, cv)
	Label(label + "_vec")
	var c reg.Register // a pixel's channels in bytes
	if w.masked || vecs == 1 {
		c = channelVectors(label, w, pixels, vecs, out, in, ps, cv)
		ADDQ(U32(w.width*vecs), cv)
	} else {
		left := Load(Param("c"), GP64())
		SHLQ(U8(2), left)
		SUBQ(cv, left)
		CMPQ(left, U32(w.width*vecs))
		JB(LabelRef(label + "_one"))
		channelVectors(label+"_m", w, pixels, vecs, out, in, ps, cv)
		ADDQ(U32(w.width*vecs), cv)
		JMP(LabelRef(label + "_next"))
		Label(label + "_one")
		channelVectors(label+"_s", w, pixels, 1, out, in, ps, cv)
		ADDQ(U32(w.width), cv)
		Label(label + "_next")
		c = Load(Param("c"), GP64())
		SHLQ(U8(2), c)
	}
	CMPQ(cv, c)
	JB(LabelRef(label + "_vec"))
	// The next group of pixels.
	shift := map[int]int{8: 3, 4: 2, 1: 0}[pixels]
	step := GP64()
	MOVQ(ps, step)
	if shift > 0 {
		SHLQ(U8(shift), c)
		SHLQ(U8(shift), step)
	}
	ADDQ(c, out)
	ADDQ(step, in)
	SUBQ(U32(pixels), npix)
	JMP(LabelRef(label))
	Label(label + "_done")
}

// channelVectors emits the sums of vecs vectors of channels from byte
// offset cv of each of pixels pixels over all the taps, stored to out
// (under each vector's mask with AVX-512), and returns the register
// holding a pixel's channels in bytes.
func channelVectors(label string, w isa, pixels, vecs int, out, in, ps, cv reg.Register) reg.Register {
	var ks []reg.OpmaskVirtual
	if w.masked {
		ks = make([]reg.OpmaskVirtual, vecs)
		for v := range ks {
			ks[v] = vectorMask(cv, v)
		}
	}
	acc := make([][]reg.VecVirtual, pixels)
	for p := range acc {
		acc[p] = make([]reg.VecVirtual, vecs)
		for v := range acc[p] {
			acc[p][v] = w.vec()
			if w.masked {
				VPXORD(acc[p][v], acc[p][v], acc[p][v])
			} else {
				VXORPS(acc[p][v], acc[p][v], acc[p][v])
			}
		}
	}
	taps(label, w, in, ps, cv, ks, acc)
	if withOps {
		finish(label, w, cv, acc)
	}
	c := Load(Param("c"), GP64())
	SHLQ(U8(2), c)
	o := GP64()
	LEAQ(Mem{Base: out, Index: cv, Scale: 1}, o)
	for p := range acc {
		for v, a := range acc[p] {
			if w.masked {
				VMOVUPS(a, ks[v], Mem{Base: o, Disp: w.width * v})
			} else {
				VMOVUPS(a, Mem{Base: o, Disp: w.width * v})
			}
		}
		if p < pixels-1 {
			ADDQ(c, o)
		}
	}
	return c
}

// vectorMask emits the mask of the channels of vector v after byte
// offset cv: all 16 lanes but for the last, partial, vector of a pixel,
// and none past it.
func vectorMask(cv reg.Register, v int) reg.OpmaskVirtual {
	left, bits, n := GP64(), GP64(), GP64()
	c := Load(Param("c"), GP64())
	MOVQ(c, left)
	SHLQ(U8(2), left)
	SUBQ(cv, left)
	SARQ(U8(2), left)
	SUBQ(U32(16*v), left) // channels left from the vector on
	MOVQ(U32(16), n)
	CMPQ(left, n)
	CMOVQLT(left, n)
	XORQ(bits, bits)
	CMPQ(n, bits)
	CMOVQLT(bits, n) // n in [0, 16]
	// bits = (1 << n) - 1
	MOVQ(U32(1), bits)
	SHLXQ(n, bits, bits)
	DECQ(bits)
	k := K()
	KMOVW(bits.As32(), k)
	return k
}

// taps emits the loop over the taps of vectors of channels of a group of
// pixels: each vector's weights loaded once, then for each pixel its
// input's vector times the weights, added to the pixel's sum (under the
// vectors' masks ks with AVX-512).
func taps(label string, w isa, in, ps, cv reg.Register, ks []reg.OpmaskVirtual, acc [][]reg.VecVirtual) {
	pixels, vecs := len(acc), len(acc[0])
	ioffs := Load(Param("ioffs"), GP64())
	woffs := Load(Param("woffs"), GP64())
	wp := Load(Param("w"), GP64())
	ntaps := Load(Param("ntaps"), GP64())
	inv := GP64()
	LEAQ(Mem{Base: in, Index: cv, Scale: 1}, inv)
	ADDQ(cv, wp)
	ps3 := GP64()
	LEAQ(Mem{Base: ps, Index: ps, Scale: 2}, ps3)
	t, ptr, wo := GP64(), GP64(), GP64()
	XORQ(t, t)
	Label(label + "_tap")
	MOVQ(Mem{Base: woffs, Index: t, Scale: 8}, wo)
	wv := make([]reg.VecVirtual, vecs)
	for v := range wv {
		wv[v] = w.vec()
		m := Mem{Base: wp, Index: wo, Scale: 4, Disp: w.width * v}
		if w.masked {
			VMOVUPS_Z(m, ks[v], wv[v])
		} else {
			VMOVUPS(m, wv[v])
		}
	}
	MOVQ(Mem{Base: ioffs, Index: t, Scale: 8}, ptr)
	LEAQ(Mem{Base: inv, Index: ptr, Scale: 4}, ptr)
	if pixels > 4 {
		LEAQ(Mem{Base: ptr, Index: ps, Scale: 4}, wo) // wo is free: the fifth pixel's vector
	}
	at := func(p, v int) Mem {
		base := ptr
		if p >= 4 {
			base, p = wo, p-4
		}
		switch p {
		case 0:
			return Mem{Base: base, Disp: w.width * v}
		case 3:
			return Mem{Base: base, Index: ps3, Scale: 1, Disp: w.width * v}
		}
		return Mem{Base: base, Index: ps, Scale: uint8(p), Disp: w.width * v}
	}
	for p := range acc {
		for v := range acc[p] {
			x := w.vec()
			if w.masked {
				VMULPS_Z(at(p, v), wv[v], ks[v], x)
			} else {
				VMULPS(at(p, v), wv[v], x)
			}
			VADDPS(x, acc[p][v], acc[p][v])
		}
	}
	INCQ(t)
	CMPQ(t, ntaps)
	JB(LabelRef(label + "_tap"))
}

// withOps says whether the kernel being generated finishes its sums with
// the ops parameters (depthwiseRun's ops).
var withOps bool

// finish applies the ops parameter flags selects to acc (pixels by
// vectors of channels from byte offset cv): kernels.TileOps' bias,
// floor and ceiling, each with its operands in the epilogue's order, so
// the bits are the epilogue pass's (AVX2 only: no masks).
func finish(label string, w isa, cv reg.Register, acc [][]reg.VecVirtual) {
	flags := Load(Param("flags"), GP64())
	TESTQ(U32(1), flags)
	JZ(LabelRef(label + "_nobias"))
	bias := Load(Param("bias"), GP64())
	bv := make([]reg.VecVirtual, len(acc[0]))
	for v := range bv {
		bv[v] = w.vec()
		VMOVUPS(Mem{Base: bias, Index: cv, Scale: 1, Disp: w.width * v}, bv[v])
	}
	TESTQ(U32(2), flags)
	JNZ(LabelRef(label + "_biasfirst"))
	for p := range acc {
		for v, x := range acc[p] {
			VADDPS(bv[v], x, x) // x + bias
		}
	}
	JMP(LabelRef(label + "_nobias"))
	Label(label + "_biasfirst")
	for p := range acc {
		for v, x := range acc[p] {
			VADDPS(x, bv[v], x) // bias + x
		}
	}
	Label(label + "_nobias")
	t := w.vec()
	for _, b := range []struct {
		flag  uint32
		param string
		op    func(x, t reg.VecVirtual)
	}{{16, "floor", func(x, t reg.VecVirtual) { VMAXPS(x, t, x) }}, {128, "ceil", func(x, t reg.VecVirtual) { VMINPS(x, t, x) }}} {
		next := fmt.Sprintf("%s_no%s", label, b.param)
		TESTQ(U32(b.flag), flags)
		JZ(LabelRef(next))
		v, err := Param(b.param).Resolve()
		if err != nil {
			panic(err)
		}
		VBROADCASTSS(v.Addr, t)
		for p := range acc {
			for _, x := range acc[p] {
				b.op(x, t) // with the bound first: NaN and an equal value kept
			}
		}
		Label(next)
	}
}
