//go:build amd64 && !purego

package kernels

// winoInput is winoInputGo, its whole vectors of eight channels on the
// AVX2 kernels (the same bits).
func winoInput(m int, d []float32, row, col int, v []float32, vs, c int) {
	c8, a := c&^7, m+2
	if useAsm && c8 > 0 && len(d) >= (a-1)*(row+col)+c && len(v) >= (a*a-1)*vs+c {
		if m == 2 {
			winoInput4(&d[0], row, col, &v[0], vs, c8)
		} else {
			winoInput6(&d[0], row, col, &v[0], vs, c8)
		}
	} else {
		c8 = 0
	}
	if c8 < c {
		winoInputGo(m, d[c8:], row, col, v[c8:], vs, c-c8)
	}
}

// winoOutput is winoOutputGo, its whole vectors of eight channels on the
// AVX2 kernels (the same bits).
func winoOutput(t int, m []float32, ms int, y []float32, row, col, n int) {
	n8, a := n&^7, t+2
	if useAsm && n8 > 0 && len(m) >= (a*a-1)*ms+n && len(y) >= (t-1)*(row+col)+n {
		if t == 2 {
			winoOutput4(&m[0], ms, &y[0], row, col, n8)
		} else {
			winoOutput6(&m[0], ms, &y[0], row, col, n8)
		}
	} else {
		n8 = 0
	}
	if n8 < n {
		winoOutputGo(t, m[n8:], ms, y[n8:], row, col, n-n8)
	}
}
