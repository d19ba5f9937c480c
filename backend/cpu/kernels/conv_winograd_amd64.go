//go:build amd64 && !purego

package kernels

// winoInput is winoInputGo, its whole vectors of eight channels on the
// AVX2 kernel (the same bits).
func winoInput(d []float32, row, col int, v []float32, vs, c int) {
	c8 := c &^ 7
	if useAsm && c8 > 0 && len(d) >= 3*row+3*col+c && len(v) >= 15*vs+c {
		winoInput256(&d[0], row, col, &v[0], vs, c8)
	} else {
		c8 = 0
	}
	if c8 < c {
		winoInputGo(d[c8:], row, col, v[c8:], vs, c-c8)
	}
}

// winoOutput is winoOutputGo, its whole vectors of eight channels on the
// AVX2 kernel (the same bits).
func winoOutput(m []float32, ms int, y []float32, row, col, n int) {
	n8 := n &^ 7
	if useAsm && n8 > 0 && len(m) >= 15*ms+n && len(y) >= row+col+n {
		winoOutput256(&m[0], ms, &y[0], row, col, n8)
	} else {
		n8 = 0
	}
	if n8 < n {
		winoOutputGo(m[n8:], ms, y[n8:], row, col, n-n8)
	}
}
