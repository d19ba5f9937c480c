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
	a, done := m+2, 0
	if useAsm && c >= 8 && len(d) >= (a-1)*(row+col)+c && len(v) >= (a*a-1)*vs+c {
		if c16 := c &^ 15; useAVX512 && c16 > 0 {
			if m == 2 {
				winoInput4x16(&d[0], row, col, &v[0], vs, c16)
			} else {
				winoInput6x16(&d[0], row, col, &v[0], vs, c16)
			}
			done = c16
		}
		if c8 := (c - done) &^ 7; c8 > 0 {
			if m == 2 {
				winoInput4(&d[done], row, col, &v[done], vs, c8)
			} else {
				winoInput6(&d[done], row, col, &v[done], vs, c8)
			}
			done += c8
		}
	}
	if done < c {
		winoInputGo(m, d[done:], row, col, v[done:], vs, c-done)
	}
}

// winoOutput is winoOutputGo on the assembly kernels, as winoInput.
func winoOutput(t int, m []float32, ms int, y []float32, row, col, n int) {
	a, done := t+2, 0
	if useAsm && n >= 8 && len(m) >= (a*a-1)*ms+n && len(y) >= (t-1)*(row+col)+n {
		if n16 := n &^ 15; useAVX512 && n16 > 0 {
			if t == 2 {
				winoOutput4x16(&m[0], ms, &y[0], row, col, n16)
			} else {
				winoOutput6x16(&m[0], ms, &y[0], row, col, n16)
			}
			done = n16
		}
		if n8 := (n - done) &^ 7; n8 > 0 {
			if t == 2 {
				winoOutput4(&m[done], ms, &y[done], row, col, n8)
			} else {
				winoOutput6(&m[done], ms, &y[done], row, col, n8)
			}
			done += n8
		}
	}
	if done < n {
		winoOutputGo(t, m[done:], ms, y[done:], row, col, n-done)
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
