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
	depthwiseRun("depthwiseRun512")
	depthwiseRun256("depthwiseRun256")
	Generate()
}

// depthwiseRun emits the kernel of a run of output pixels whose windows
// share one list of taps (an output row's interior, or one border pixel):
//
//	out[p·c + ch] = Σ_t in[p·ps + ioffs[t] + ch] · w[woffs[t] + ch]
//
// for p < npix and ch < c, each product rounded and then added, taps in
// order from zero (VMULPS then VADDPS, no fusing), so every lane gets the
// bits of the Go loop. Eight pixels go at a time (then four, then one),
// one 16-channel vector of each, so one weight load serves eight products
// and eight independent sums hide the adds' latency; the last vector of a
// pixel is masked, which is also how fewer than 16 channels are read and
// written without touching the next pixel's.
func depthwiseRun(name string) {
	TEXT(name, NOSPLIT, "func(out, in, w *float32, ioffs, woffs *int, ntaps, npix, ps, c int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets out[p*c+ch] to the sum over taps t < ntaps of in[p*ps+ioffs[t]+ch]*w[woffs[t]+ch] for p < npix, ch < c (ntaps >= 1).", name))
	out := Load(Param("out"), GP64())
	in := Load(Param("in"), GP64())
	npix := Load(Param("npix"), GP64())
	ps := Load(Param("ps"), GP64())
	SHLQ(U8(2), ps)
	block(name, 8, 1, out, in, npix, ps)
	block(name, 4, 1, out, in, npix, ps)
	// The last pixels one at a time, several vectors of each at once
	// (up to four), so that as many sums are in flight.
	c := Load(Param("c"), GP64())
	CMPQ(c, U32(16))
	JBE(LabelRef(name + "_v1"))
	CMPQ(c, U32(32))
	JBE(LabelRef(name + "_v2"))
	block(name, 1, 4, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	Label(name + "_v2")
	block(name, 1, 2, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	Label(name + "_v1")
	block(name, 1, 1, out, in, npix, ps)
	Label(name + "_end")
	VZEROUPPER()
	RET()
}

// block emits the loop over groups of pixels pixels while npix has that
// many left, vecs vectors of channels of each at a time, advancing in,
// out and npix.
func block(name string, pixels, vecs int, out, in, npix, ps reg.Register) {
	label := fmt.Sprintf("%s_p%dv%d", name, pixels, vecs)
	Label(label)
	CMPQ(npix, U32(pixels))
	JB(LabelRef(label + "_done"))
	cv := GP64() // byte offset of the first vector of channels
	XORQ(cv, cv)
	Label(label + "_vec")
	ks := make([]reg.OpmaskVirtual, vecs)
	for v := range ks {
		ks[v] = vectorMask(cv, v)
	}
	acc := make([][]reg.VecVirtual, pixels)
	for p := range acc {
		acc[p] = make([]reg.VecVirtual, vecs)
		for v := range acc[p] {
			acc[p][v] = ZMM()
			VPXORD(acc[p][v], acc[p][v], acc[p][v])
		}
	}
	taps(label, in, ps, cv, ks, acc)
	c := Load(Param("c"), GP64())
	SHLQ(U8(2), c)
	o := GP64()
	LEAQ(Mem{Base: out, Index: cv, Scale: 1}, o)
	for p := range acc {
		for v, a := range acc[p] {
			VMOVUPS(a, ks[v], Mem{Base: o, Disp: 64 * v})
		}
		if p < pixels-1 {
			ADDQ(c, o)
		}
	}
	ADDQ(U32(64*vecs), cv)
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
// input's vector times the weights, added to the pixel's sum.
func taps(label string, in, ps, cv reg.Register, ks []reg.OpmaskVirtual, acc [][]reg.VecVirtual) {
	pixels, vecs := len(acc), len(ks)
	ioffs := Load(Param("ioffs"), GP64())
	woffs := Load(Param("woffs"), GP64())
	w := Load(Param("w"), GP64())
	ntaps := Load(Param("ntaps"), GP64())
	inv := GP64()
	LEAQ(Mem{Base: in, Index: cv, Scale: 1}, inv)
	ADDQ(cv, w)
	ps3 := GP64()
	LEAQ(Mem{Base: ps, Index: ps, Scale: 2}, ps3)
	t, ptr, wo := GP64(), GP64(), GP64()
	XORQ(t, t)
	Label(label + "_tap")
	MOVQ(Mem{Base: woffs, Index: t, Scale: 8}, wo)
	wv := make([]reg.VecVirtual, vecs)
	for v := range wv {
		wv[v] = ZMM()
		VMOVUPS_Z(Mem{Base: w, Index: wo, Scale: 4, Disp: 64 * v}, ks[v], wv[v])
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
			return Mem{Base: base, Disp: 64 * v}
		case 3:
			return Mem{Base: base, Index: ps3, Scale: 1, Disp: 64 * v}
		}
		return Mem{Base: base, Index: ps, Scale: uint8(p), Disp: 64 * v}
	}
	for p := range acc {
		for v := range acc[p] {
			x := ZMM()
			VMULPS_Z(at(p, v), wv[v], ks[v], x)
			VADDPS(x, acc[p][v], acc[p][v])
		}
	}
	INCQ(t)
	CMPQ(t, ntaps)
	JB(LabelRef(label + "_tap"))
}

// depthwiseRun256 is depthwiseRun on 8-lane AVX2 vectors for c a
// multiple of 8 (no masks: a vector never passes a pixel's channels):
// the same products and sums in the same order, so the same bits. Eight
// pixels go at a time, then four, then one with up to four vectors, as
// in the AVX-512 kernel; one call a run of pixels, where the AVX2 path
// called a one-pixel kernel per pixel (a MobileNet's 8-channel 3×3
// depthwise layers: 33 ns a pixel, mostly the calls).
func depthwiseRun256(name string) {
	TEXT(name, NOSPLIT, "func(out, in, w *float32, ioffs, woffs *int, ntaps, npix, ps, c int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets out[p*c+ch] to the sum over taps t < ntaps of in[p*ps+ioffs[t]+ch]*w[woffs[t]+ch] for p < npix, ch < c (ntaps >= 1, c a positive multiple of 8; AVX2).", name))
	out := Load(Param("out"), GP64())
	in := Load(Param("in"), GP64())
	npix := Load(Param("npix"), GP64())
	ps := Load(Param("ps"), GP64())
	SHLQ(U8(2), ps)
	block256(name, 8, 1, out, in, npix, ps)
	block256(name, 4, 1, out, in, npix, ps)
	c := Load(Param("c"), GP64())
	CMPQ(c, U32(8))
	JBE(LabelRef(name + "_v1"))
	CMPQ(c, U32(16))
	JBE(LabelRef(name + "_v2"))
	CMPQ(c, U32(24))
	JBE(LabelRef(name + "_v3"))
	block256(name, 1, 4, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	Label(name + "_v3")
	block256(name, 1, 3, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	Label(name + "_v2")
	block256(name, 1, 2, out, in, npix, ps)
	JMP(LabelRef(name + "_end"))
	Label(name + "_v1")
	block256(name, 1, 1, out, in, npix, ps)
	Label(name + "_end")
	VZEROUPPER()
	RET()
}

// block256 is block for depthwiseRun256: vecs whole 8-lane vectors of
// each of pixels pixels at a time, while at least vecs vectors of the
// pixel's channels are left (and then the rest of them, vector by vector,
// on the same loop with fewer vectors where vecs does not divide them:
// the one-pixel loops are emitted for vecs = 4, 3, 2, 1 by the caller's
// choice of the largest that fits c, and a remainder runs one vector at
// a time below).
func block256(name string, pixels, vecs int, out, in, npix, ps reg.Register) {
	label := fmt.Sprintf("%s_p%dv%d", name, pixels, vecs)
	Label(label)
	CMPQ(npix, U32(pixels))
	JB(LabelRef(label + "_done"))
	c := Load(Param("c"), GP64())
	SHLQ(U8(2), c) // a pixel's channels in bytes
	cv := GP64()   // byte offset of the first vector of channels
	XORQ(cv, cv)
	Label(label + "_vec")
	// vecs vectors while that many are left, then one at a time.
	left := GP64()
	MOVQ(c, left)
	SUBQ(cv, left)
	CMPQ(left, U32(32*vecs))
	JB(LabelRef(label + "_one"))
	channelVectors256(label+"_m", pixels, vecs, out, in, ps, cv)
	ADDQ(U32(32*vecs), cv)
	JMP(LabelRef(label + "_next"))
	Label(label + "_one")
	channelVectors256(label+"_s", pixels, 1, out, in, ps, cv)
	ADDQ(U32(32), cv)
	Label(label + "_next")
	c = Load(Param("c"), GP64())
	SHLQ(U8(2), c)
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

// channelVectors256 emits the sums of vecs vectors of channels from byte
// offset cv of each of pixels pixels over all the taps, stored to out.
func channelVectors256(label string, pixels, vecs int, out, in, ps, cv reg.Register) {
	acc := make([][]reg.VecVirtual, pixels)
	for p := range acc {
		acc[p] = make([]reg.VecVirtual, vecs)
		for v := range acc[p] {
			acc[p][v] = YMM()
			VXORPS(acc[p][v], acc[p][v], acc[p][v])
		}
	}
	taps256(label, in, ps, cv, acc)
	c := Load(Param("c"), GP64())
	SHLQ(U8(2), c)
	o := GP64()
	LEAQ(Mem{Base: out, Index: cv, Scale: 1}, o)
	for p := range acc {
		for v, a := range acc[p] {
			VMOVUPS(a, Mem{Base: o, Disp: 32 * v})
		}
		if p < pixels-1 {
			ADDQ(c, o)
		}
	}
}

// taps256 is taps on 8-lane vectors without masks.
func taps256(label string, in, ps, cv reg.Register, acc [][]reg.VecVirtual) {
	vecs := len(acc[0])
	ioffs := Load(Param("ioffs"), GP64())
	woffs := Load(Param("woffs"), GP64())
	w := Load(Param("w"), GP64())
	ntaps := Load(Param("ntaps"), GP64())
	inv := GP64()
	LEAQ(Mem{Base: in, Index: cv, Scale: 1}, inv)
	ADDQ(cv, w)
	ps3 := GP64()
	LEAQ(Mem{Base: ps, Index: ps, Scale: 2}, ps3)
	t, ptr, wo := GP64(), GP64(), GP64()
	XORQ(t, t)
	Label(label + "_tap")
	MOVQ(Mem{Base: woffs, Index: t, Scale: 8}, wo)
	wv := make([]reg.VecVirtual, vecs)
	for v := range wv {
		wv[v] = YMM()
		VMOVUPS(Mem{Base: w, Index: wo, Scale: 4, Disp: 32 * v}, wv[v])
	}
	MOVQ(Mem{Base: ioffs, Index: t, Scale: 8}, ptr)
	LEAQ(Mem{Base: inv, Index: ptr, Scale: 4}, ptr)
	if len(acc) > 4 {
		LEAQ(Mem{Base: ptr, Index: ps, Scale: 4}, wo) // wo is free: the fifth pixel's vector
	}
	at := func(p, v int) Mem {
		base := ptr
		if p >= 4 {
			base, p = wo, p-4
		}
		switch p {
		case 0:
			return Mem{Base: base, Disp: 32 * v}
		case 3:
			return Mem{Base: base, Index: ps3, Scale: 1, Disp: 32 * v}
		}
		return Mem{Base: base, Index: ps, Scale: uint8(p), Disp: 32 * v}
	}
	for p := range acc {
		for v := range acc[p] {
			x := YMM()
			VMULPS(at(p, v), wv[v], x)
			VADDPS(x, acc[p][v], acc[p][v])
		}
	}
	INCQ(t)
	CMPQ(t, ntaps)
	JB(LabelRef(label + "_tap"))
}
