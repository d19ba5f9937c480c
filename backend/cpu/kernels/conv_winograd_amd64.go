//go:build amd64 && !purego

package kernels

// winoInput is winoInputGo on the assembly kernels, sixteen channels a
// vector with AVX-512, eight with AVX2, the last fewer than eight in Go
// (the same bits). On this Zen 4 host, which splits 512-bit operations,
// the sixteen-lane transforms time as the eight-lane ones (in one
// process, alternated, ResNet's 3×3 layers: 0.99–1.04); on Intel's
// AVX-512 cores they halve the instructions of transforms that take a
// third of a 32-channel layer's time (not measured there).
func winoInput(m int, d []float32, row, col int, v []float32, vs, c int) {
	a := m + 2
	asm := len(d) >= (a-1)*(row+col)+c && len(v) >= (a*a-1)*vs+c
	x16, x8 := winoInput6x16, winoInput6
	if m == 2 {
		x16, x8 = winoInput4x16, winoInput4
	}
	winoLanes(c, asm, func(lanes16 bool, off, n int) {
		if lanes16 {
			x16(&d[off], row, col, &v[off], vs, n)
		} else {
			x8(&d[off], row, col, &v[off], vs, n)
		}
	}, func(off, n int) { winoInputGo(m, d[off:], row, col, v[off:], vs, n) })
}

// winoOutput is winoOutputGo on the assembly kernels, as winoInput.
func winoOutput(t int, m []float32, ms int, y []float32, row, col, n int) {
	a := t + 2
	asm := len(m) >= (a*a-1)*ms+n && len(y) >= (t-1)*(row+col)+n
	x16, x8 := winoOutput6x16, winoOutput6
	if t == 2 {
		x16, x8 = winoOutput4x16, winoOutput4
	}
	winoLanes(n, asm, func(lanes16 bool, off, cnt int) {
		if lanes16 {
			x16(&m[off], ms, &y[off], row, col, cnt)
		} else {
			x8(&m[off], ms, &y[off], row, col, cnt)
		}
	}, func(off, cnt int) { winoOutputGo(t, m[off:], ms, y[off:], row, col, cnt) })
}

// winoLanes splits c channels between the transforms' kernels: whole
// sixteen-lane vectors with AVX-512, then whole eight-lane ones, where
// the assembly runs and asm (its operands in bounds), then the rest in
// Go; each call gets its first channel and count.
func winoLanes(c int, asm bool, vec func(lanes16 bool, off, n int), rest func(off, n int)) {
	done := 0
	if useAsm && asm {
		if c16 := c &^ 15; useAVX512 && c16 > 0 {
			vec(true, 0, c16)
			done = c16
		}
		if c8 := (c - done) &^ 7; c8 > 0 {
			vec(false, done, c8)
			done += c8
		}
	}
	if done < c {
		rest(done, c-done)
	}
}

// absMaxBits is absMaxBitsGo, 32 values a step on AVX2.
func absMaxBits(x []float32) uint32 {
	n := len(x) &^ 31
	var most uint32
	if useAsm && n > 0 {
		most = winoAbsMax(&x[0], n)
	} else {
		n = 0
	}
	return max(most, absMaxBitsGo(x[n:]))
}
