package kernels

import "github.com/axle-ml/axle/cbrng"

//go:generate sh -c "cd _asm && go run ./random -out ../random_amd64.s -stubs ../random_stub_amd64.go -pkg kernels"

// PhiloxWords fills w with the words of consecutive Philox-4x32-10 blocks
// under key (k0, k1): word i is word i%4 of block ctr+i/4, the last block
// cut short where w ends (XLA's rng-bit-generator layout for 32-bit
// words). The blocks are cbrng.Philox4x32's, bit for bit; with AVX2 they
// are computed eight at a time, one per vector lane.
func PhiloxWords(k0, k1 uint32, ctr cbrng.U128, w []uint32) {
	b := 0 // blocks done
	for len(w)-4*b >= 32 && useAsm {
		c := ctr.Add(uint64(b)).Words()
		// The vector kernel steps only the counter's first word: run it
		// for the groups before that word wraps, the group that wraps
		// through the scalar blocks.
		groups := min((len(w)-4*b)/32, int((1<<32-uint64(c[0]))/8))
		if groups == 0 {
			philoxScalar(k0, k1, ctr.Add(uint64(b)), w[4*b:4*b+32])
			b += 8
			continue
		}
		philox8(groups, &c, k0, k1, &w[4*b])
		b += 8 * groups
	}
	philoxScalar(k0, k1, ctr.Add(uint64(b)), w[4*b:])
}

// philoxScalar is PhiloxWords one block (or two) at a time.
func philoxScalar(k0, k1 uint32, ctr cbrng.U128, w []uint32) {
	b := 0
	for ; 4*b+8 <= len(w); b += 2 {
		x, y := cbrng.Philox4x32x2(ctr.Add(uint64(b)).Words(), ctr.Add(uint64(b+1)).Words(), k0, k1)
		o := w[4*b : 4*b+8 : 4*b+8]
		o[0], o[1], o[2], o[3] = x[0], x[1], x[2], x[3]
		o[4], o[5], o[6], o[7] = y[0], y[1], y[2], y[3]
	}
	for ; 4*b < len(w); b++ {
		x := cbrng.Philox4x32(ctr.Add(uint64(b)).Words(), k0, k1)
		copy(w[4*b:], x[:])
	}
}
