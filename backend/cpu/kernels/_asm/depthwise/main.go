// Command depthwise generates the AVX-512 kernel of package kernels'
// channels-last depthwise convolution (conv_depthwise_amd64.s).
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
	for _, pixels := range []int{8, 4, 1} {
		block(name, pixels, out, in, npix, ps)
	}
	VZEROUPPER()
	RET()
}

// block emits the loop over groups of pixels pixels while npix has that
// many left, advancing in, out and npix.
func block(name string, pixels int, out, in, npix, ps reg.Register) {
	label := fmt.Sprintf("%s_p%d", name, pixels)
	Label(label)
	CMPQ(npix, U32(pixels))
	JB(LabelRef(label + "_done"))
	cv := GP64() // byte offset of the vector of channels
	XORQ(cv, cv)
	Label(label + "_vec")
	k := vectorMask()(cv)
	acc := make([]reg.VecVirtual, pixels)
	for p := range acc {
		acc[p] = ZMM()
		VPXORD(acc[p], acc[p], acc[p])
	}
	taps(label, pixels, in, ps, cv, k, acc)
	c := Load(Param("c"), GP64())
	SHLQ(U8(2), c)
	o := GP64()
	LEAQ(Mem{Base: out, Index: cv, Scale: 1}, o)
	for p := range acc {
		VMOVUPS(acc[p], k, Mem{Base: o})
		if p < pixels-1 {
			ADDQ(c, o)
		}
	}
	ADDQ(U32(64), cv)
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

// vectorMask returns the emitter of the mask of the channels of the
// vector at byte offset cv: all 16 lanes but for the last, partial,
// vector of a pixel.
func vectorMask() func(cv reg.Register) reg.OpmaskVirtual {
	return func(cv reg.Register) reg.OpmaskVirtual {
		left, bits, n := GP64(), GP64(), GP64()
		c := Load(Param("c"), GP64())
		MOVQ(c, left)
		SHLQ(U8(2), left)
		SUBQ(cv, left)
		SHRQ(U8(2), left) // channels left
		MOVQ(U32(16), n)
		CMPQ(left, n)
		CMOVQLT(left, n)
		// bits = (1 << n) - 1, n in [1, 16]
		MOVQ(U32(1), bits)
		SHLXQ(n, bits, bits)
		DECQ(bits)
		k := K()
		KMOVW(bits.As32(), k)
		return k
	}
}

// taps emits the loop over the taps of one vector of channels of pixels
// pixels: a weight vector loaded once, then for each pixel its input's
// vector times the weight, added to the pixel's sum.
func taps(label string, pixels int, in, ps, cv reg.Register, k reg.OpmaskVirtual, acc []reg.VecVirtual) {
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
	wv := ZMM()
	VMOVUPS_Z(Mem{Base: w, Index: wo, Scale: 4}, k, wv)
	MOVQ(Mem{Base: ioffs, Index: t, Scale: 8}, ptr)
	LEAQ(Mem{Base: inv, Index: ptr, Scale: 4}, ptr)
	if pixels > 4 {
		LEAQ(Mem{Base: ptr, Index: ps, Scale: 4}, wo) // wo is free: the fifth pixel's vector
	}
	at := func(p int) Mem {
		base := ptr
		if p >= 4 {
			base, p = wo, p-4
		}
		switch p {
		case 0:
			return Mem{Base: base}
		case 3:
			return Mem{Base: base, Index: ps3, Scale: 1}
		}
		return Mem{Base: base, Index: ps, Scale: uint8(p)}
	}
	for p := range acc {
		x := ZMM()
		VMULPS_Z(at(p), wv, k, x)
		VADDPS(x, acc[p], acc[p])
	}
	INCQ(t)
	CMPQ(t, ntaps)
	JB(LabelRef(label + "_tap"))
}
