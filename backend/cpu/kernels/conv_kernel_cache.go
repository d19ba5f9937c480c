package kernels

import "sync"

// ConvKernelCache keeps a convolution kernel's packed panels across
// calls (see ConvPackedF32). Its zero value is ready; it is safe for
// concurrent calls.
type ConvKernelCache struct {
	mu     sync.RWMutex
	kernel *float32 // the array the panels were packed from
	n      int
	panels map[[4]int][]float32 // (first output channel, pc, kb, nb)
}

// forKernel returns c after dropping panels packed from another array.
func (c *ConvKernelCache) forKernel(kernel []float32) *ConvKernelCache {
	if c == nil || len(kernel) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kernel != &kernel[0] || c.n != len(kernel) {
		c.kernel, c.n, c.panels = &kernel[0], len(kernel), map[[4]int][]float32{}
	}
	return c
}

func (c *ConvKernelCache) get(key [4]int) []float32 {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.panels[key]
}

func (c *ConvKernelCache) put(key [4]int, panel []float32) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.panels[key] = panel
}

// peeker returns reader's peek: the cached panel of the kernel columns
// from co0 on, or nil if not packed yet.
func (c *ConvKernelCache) peeker(co0 int) func(pc, jc, kb, nb int) []float32 {
	if c == nil {
		return nil
	}
	return func(pc, jc, kb, nb int) []float32 { return c.get([4]int{co0 + jc, pc, kb, nb}) }
}

// reader returns a reader of the cached panels for kernel columns from
// co0 on, packing each with pack on its first use; nil without a cache
// (the product then packs on every call). The GEMM paths (pointwise and
// im2col) read the panels in place: a kernel's slivers are not copied on
// every call (ResNet's last 1×1 convolutions, 7×7 pixels by 1024
// channels, copied a megabyte of panels for 26 MFLOP).
func (c *ConvKernelCache) reader(co0 int, pack func(dst []float32, pc, jc, kb, nb, from, to int)) func(pc, jc, kb, nb int) []float32 {
	if c == nil {
		return nil
	}
	return func(pc, jc, kb, nb int) []float32 {
		key := [4]int{co0 + jc, pc, kb, nb}
		bp := c.get(key)
		if bp == nil {
			slivers := (nb + sgemmNR - 1) / sgemmNR
			bp = make([]float32, slivers*sgemmNR*kb)
			pack(bp, pc, jc, kb, nb, 0, slivers)
			c.put(key, bp)
		}
		return bp
	}
}
