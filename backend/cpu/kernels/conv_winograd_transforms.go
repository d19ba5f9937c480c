package kernels

import "math"

// The Go twins of Winograd's image and product transforms
// (conv_winograd.go), and of the image scan; the assembly gives their
// bits.

// absMaxBitsGo is absMaxBits in Go: the largest of x's values' bits with
// the sign cleared, as unsigned integers (NaNs above infinities above
// every finite value; 0 for none).
func absMaxBitsGo(x []float32) uint32 {
	var most uint32
	for _, v := range x {
		most = max(most, math.Float32bits(v)&^(1<<31))
	}
	return most
}

// winoInputGo is winoInput in Go: V = Bᵀ d B for each of c channels,
// d's element (i, j) at d[i·row + j·col + channel], V_ξ at v[ξ·vs +
// channel], for F(m×m, 3×3).
func winoInputGo(m int, d []float32, row, col int, v []float32, vs, c int) {
	if m == 2 {
		winoInput4Go(d, row, col, v, vs, c)
	} else {
		winoInput6Go(d, row, col, v, vs, c)
	}
}

// winoOutputGo is winoOutput in Go: Y = Aᵀ M A for each of n channels,
// M_ξ at mm[ξ·ms + channel], Y's element (i, j) to y[i·row + j·col +
// channel], for F(m×m, 3×3).
func winoOutputGo(m int, mm []float32, ms int, y []float32, row, col, n int) {
	if m == 2 {
		winoOutput4Go(mm, ms, y, row, col, n)
	} else {
		winoOutput6Go(mm, ms, y, row, col, n)
	}
}

// winoB6 applies F(4×4, 3×3)'s Bᵀ to a column of six (the assembly's
// order of operations: products rounded, then added left to right).
func winoB6(x0, x1, x2, x3, x4, x5 float32) (y0, y1, y2, y3, y4, y5 float32) {
	p, q := x4-float32(4*x2), x3-float32(4*x1)
	r, s := x4-x2, 2*(x3-x1)
	y0 = float32(4*x0) - float32(5*x2) + x4
	y5 = float32(4*x1) - float32(5*x3) + x5
	return y0, p + q, p - q, r + s, r - s, y5
}

// winoA6 applies F(4×4, 3×3)'s Aᵀ to a column of six.
func winoA6(x0, x1, x2, x3, x4, x5 float32) (y0, y1, y2, y3 float32) {
	a, b, c, e := x1+x2, x1-x2, x3+x4, x3-x4
	return x0 + a + c, b + float32(2*e), a + float32(4*c), b + float32(8*e) + x5
}

// winoInput6Go is F(4×4, 3×3)'s input transform: Bᵀ down each column of
// the 6×6 patch, then along each row of the result.
func winoInput6Go(d []float32, row, col int, v []float32, vs, c int) {
	for ch := range c {
		var t [6][6]float32
		for j := range 6 {
			o := j*col + ch
			t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j] = winoB6(d[o], d[row+o], d[2*row+o], d[3*row+o], d[4*row+o], d[5*row+o])
		}
		for i := range 6 {
			y0, y1, y2, y3, y4, y5 := winoB6(t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5])
			o := 6*i*vs + ch
			v[o], v[o+vs], v[o+2*vs], v[o+3*vs], v[o+4*vs], v[o+5*vs] = y0, y1, y2, y3, y4, y5
		}
	}
}

// winoOutput6Go is F(4×4, 3×3)'s output transform: Aᵀ down each column
// of the 6×6 products, then along each row of the result.
func winoOutput6Go(m []float32, ms int, y []float32, row, col, n int) {
	for ch := range n {
		var s [4][6]float32
		for j := range 6 {
			o := j*ms + ch
			s[0][j], s[1][j], s[2][j], s[3][j] = winoA6(m[o], m[6*ms+o], m[12*ms+o], m[18*ms+o], m[24*ms+o], m[30*ms+o])
		}
		for i := range 4 {
			y0, y1, y2, y3 := winoA6(s[i][0], s[i][1], s[i][2], s[i][3], s[i][4], s[i][5])
			o := i*row + ch
			y[o], y[o+col], y[o+2*col], y[o+3*col] = y0, y1, y2, y3
		}
	}
}

// winoInput4Go is F(2×2, 3×3)'s input transform.
func winoInput4Go(d []float32, row, col int, v []float32, vs, c int) {
	for ch := range c {
		var t [16]float32
		for j := range 4 {
			d0, d1, d2, d3 := d[j*col+ch], d[row+j*col+ch], d[2*row+j*col+ch], d[3*row+j*col+ch]
			t[j] = d0 - d2
			t[4+j] = d1 + d2
			t[8+j] = d2 - d1
			t[12+j] = d1 - d3
		}
		for i := range 4 {
			t0, t1, t2, t3 := t[4*i], t[4*i+1], t[4*i+2], t[4*i+3]
			v[(4*i)*vs+ch] = t0 - t2
			v[(4*i+1)*vs+ch] = t1 + t2
			v[(4*i+2)*vs+ch] = t2 - t1
			v[(4*i+3)*vs+ch] = t1 - t3
		}
	}
}

// winoOutput4Go is F(2×2, 3×3)'s output transform.
func winoOutput4Go(m []float32, ms int, y []float32, row, col, n int) {
	for ch := range n {
		var s [8]float32
		for j := range 4 {
			m0, m1, m2, m3 := m[j*ms+ch], m[(4+j)*ms+ch], m[(8+j)*ms+ch], m[(12+j)*ms+ch]
			s[j] = m0 + m1 + m2
			s[4+j] = m1 - m2 - m3
		}
		for i := range 2 {
			s0, s1, s2, s3 := s[4*i], s[4*i+1], s[4*i+2], s[4*i+3]
			y[i*row+ch] = s0 + s1 + s2
			y[i*row+col+ch] = s1 - s2 - s3
		}
	}
}
