//go:build amd64 && !purego

package kernels

import "unsafe"

// The assembly kernels are called directly (not through a func value)
// so their noescape stubs keep the tail buffers on the stack.
const (
	opExp = iota
	opTanh
	opLogistic
)

func expF32(dst, x []float32) {
	if !useAsm {
		mapGo(dst, x, exp32)
		return
	}
	mapAsm(opExp, dst, x)
}

func tanhF32(dst, x []float32) {
	if !useAsm {
		mapGo(dst, x, tanh32)
		return
	}
	mapAsm(opTanh, dst, x)
}

func logisticF32(dst, x []float32) {
	if !useAsm {
		mapGo(dst, x, logistic32)
		return
	}
	mapAsm(opLogistic, dst, x)
}

// ntMin is the length from which the kernels store non-temporally: the
// output is then too big to stay in cache for whoever reads it next, and
// streaming stores save reading dst in first.
const ntMin = StreamMin

// mapAsm runs kernel op over x. With a long x it runs the few elements
// before dst's first vector boundary and the last partial vector through
// a stack buffer and the rest with non-temporal stores; otherwise only
// the last partial vector goes through the buffer. Where AVX-512 runs,
// whole 16-lane vectors go to its kernels and a last 8 to the AVX2 ones.
// Either way every element gets the same arithmetic: the kernels of both
// widths do the same operations lane by lane.
func mapAsm(op int, dst, x []float32) {
	wide := useAVX512
	if len(x) >= ntMin {
		align := uintptr(32)
		if wide {
			align = 64
		}
		head := int((align-uintptr(unsafe.Pointer(&dst[0]))%align)%align) / 4
		mapAsm(op, dst[:head], x[:head])
		dst, x = dst[head:], x[head:]
		n := len(x) &^ int(align/4-1)
		callAsm(op, true, wide, &dst[0], &x[0], n)
		dst, x = dst[n:], x[n:]
	}
	if n := len(x) &^ 15; wide && n > 0 {
		callAsm(op, false, true, &dst[0], &x[0], n)
		dst, x = dst[n:], x[n:]
	}
	n := len(x) &^ 7
	if n > 0 {
		callAsm(op, false, false, &dst[0], &x[0], n)
	}
	if r := len(x) - n; r > 0 {
		var buf [8]float32
		copy(buf[:], x[n:])
		callAsm(op, false, false, &buf[0], &buf[0], 8)
		copy(dst[n:], buf[:r])
	}
}

func callAsm(op int, nt, wide bool, dst, x *float32, n int) {
	asmKernels[b2i(wide)][op][b2i(nt)](dst, x, n)
}

// asmKernels[wide][op][nt] is op's kernel: AVX-512 when wide, with
// non-temporal stores when nt.
var asmKernels = [2][3][2]func(dst, x *float32, n int){
	{{expAVX, expAVXNT}, {tanhAVX, tanhAVXNT}, {logisticAVX, logisticAVXNT}},
	{{expAVX512, expAVX512NT}, {tanhAVX512, tanhAVX512NT}, {logisticAVX512, logisticAVX512NT}},
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sumBlockF32(x []float32) float32 {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		return sumGo(x)
	}
	return sumAVX(&x[0], n) + sumGo(x[n:])
}

func maxF32(x []float32) float32 {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		return maxGo(x)
	}
	return max(maxAVX(&x[0], n), maxGo(x[n:]))
}

// rowsVec folds each cols-long row of x into dst with one assembly call
// a row, for rows of whole vectors no longer than a sum block: exactly
// the calls SumF32, maxF32 and minF32 make for such a row (their scalar
// tails are empty), without their layers around it, which cost as much
// as a short row's arithmetic (attention's 128-wide softmax). It reports
// false, doing nothing, for other rows.
func rowsVec(op int, dst, x []float32, cols int) bool {
	if !useAsm || cols == 0 || cols%8 != 0 || cols > sumBlock {
		return false
	}
	for i := range dst {
		row := &x[i*cols]
		switch op {
		case opSumRows:
			dst[i] = sumAVX(row, cols)
		case opMaxRows:
			dst[i] = maxAVX(row, cols)
		default:
			dst[i] = minAVX(row, cols)
		}
	}
	return true
}

func minF32(x []float32) float32 {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		return minGo(x)
	}
	return min(minAVX(&x[0], n), minGo(x[n:]))
}

func addTo(dst, x []float32) {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		addToGo(dst, x)
		return
	}
	addToAVX(&dst[0], &x[0], n)
	addToGo(dst[n:], x[n:])
}

func maxTo(dst, x []float32) {
	n := len(x) &^ 7
	if !useAsm || n == 0 {
		maxToGo(dst, x)
		return
	}
	maxToAVX(&dst[0], &x[0], n)
	maxToGo(dst[n:], x[n:])
}

// colSumVec adds whole 8-column blocks of rows rows (stride apart) into
// d and returns how many columns it did.
func colSumVec(d, src []float32, rows, stride int) int {
	if !useAsm || rows == 0 {
		return 0
	}
	_ = src[(rows-1)*stride+len(d)-1]
	j := 0
	for ; j+32 <= len(d); j += 32 {
		colSumF32x32(&d[j], &src[j], rows, stride)
	}
	if j+16 <= len(d) {
		colSumF32x16(&d[j], &src[j], rows, stride)
		j += 16
	}
	if j+8 <= len(d) {
		colSumF32x8(&d[j], &src[j], rows, stride)
		j += 8
	}
	return j
}
