package kernels

import "sync"

// ConvKernelCache keeps a convolution kernel's packed panels across
// calls (see ConvPackedF32). Its zero value is ready; it is safe for
// concurrent calls.
type ConvKernelCache struct {
	mu     sync.RWMutex
	kernel *float32 // the array the panels were packed from
	n      int
	panels map[[4]int][]float32 // by panelKey
	cuts   cutCache
	wino   *WinogradKernel // the kernel transformed for Winograd, once asked for
	// transposed is the kernel as a transposed convolution's product
	// matrix (conv_transposed.go), once asked for.
	transposed []float32
	// cutsOnly: a kernel that may change between calls (a parameter):
	// no panels kept, only the cuts (NewConvCutCache).
	cutsOnly bool
}

// NewConvCutCache returns a cache for a convolution whose kernel may
// change between calls (a training step's weights, a parameter): it
// keeps no panels, only what depends on the image's address and the
// shapes (the direct kernel's cuts of its rows), which building took 3%
// of a batch-32 ResNet layer on two threads.
func NewConvCutCache() *ConvKernelCache { return &ConvKernelCache{cutsOnly: true} }

// panelKey names the panel of kernel columns [co0+jc, co0+jc+nb) and K
// slice [pc, pc+kb).
func panelKey(co0, jc, pc, kb, nb int) [4]int { return [4]int{co0 + jc, pc, kb, nb} }

// keepsPanels reports whether c keeps packed panels.
func (c *ConvKernelCache) keepsPanels() bool { return c != nil && !c.cutsOnly }

// forKernel returns c after dropping panels packed from another array.
func (c *ConvKernelCache) forKernel(kernel []float32) *ConvKernelCache {
	if c == nil || len(kernel) == 0 {
		return nil
	}
	if c.cutsOnly {
		return c
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kernel != &kernel[0] || c.n != len(kernel) {
		c.kernel, c.n, c.panels, c.wino, c.transposed = &kernel[0], len(kernel), map[[4]int][]float32{}, nil, nil
	}
	return c
}

func (c *ConvKernelCache) get(key [4]int) []float32 {
	if !c.keepsPanels() {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.panels[key]
}

func (c *ConvKernelCache) put(key [4]int, panel []float32) {
	if !c.keepsPanels() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.panels[key] = panel
}

// peeker returns reader's peek: the cached panel of the kernel columns
// from co0 on, or nil if not packed yet.
func (c *ConvKernelCache) peeker(co0 int) func(pc, jc, kb, nb int) []float32 {
	if !c.keepsPanels() {
		return nil
	}
	return func(pc, jc, kb, nb int) []float32 { return c.get(panelKey(co0, jc, pc, kb, nb)) }
}

// reader returns a reader of the cached panels for kernel columns from
// co0 on, packing each with pack on its first use; nil without a cache
// (the product then packs on every call). The GEMM paths (pointwise and
// im2col) read the panels in place: a kernel's slivers are not copied on
// every call (ResNet's last 1×1 convolutions, 7×7 pixels by 1024
// channels, copied a megabyte of panels for 26 MFLOP).
func (c *ConvKernelCache) reader(co0 int, pack func(dst []float32, pc, jc, kb, nb, from, to int)) func(pc, jc, kb, nb int) []float32 {
	if !c.keepsPanels() {
		return nil
	}
	return func(pc, jc, kb, nb int) []float32 {
		key := panelKey(co0, jc, pc, kb, nb)
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

// cutCache keeps a direct convolution's cuts of its output rows into
// groups and slivers (blockCuts.cut) across calls. The slivers' tap runs
// point into the image, so a set of cuts holds for calls on one image
// array only: a model's executions find their activations at the same
// address run after run (the arena's), and a staged image (a first
// layer's bands) in the same pool buffer; building the runs was 3% of
// ResNet-50's time on one thread. It keeps the sets of the last few
// images, so that threads staging bands in buffers of their own do not
// evict each other's; calls still running on an evicted set keep it.
// The runs' pointers keep those images alive while their set is kept: at
// most cutImages arrays a convolution (activations the arena keeps
// anyway, or a caller's input the convolution read in place).
type cutCache struct {
	mu   sync.Mutex
	sets []*cutSet // most recently used last
}

// cutImages is how many images' cuts a cutCache keeps.
const cutImages = 4

// cutKey names one block's cut: its feature group's first channel, its
// rows and its K block.
type cutKey struct{ c0, from, to, pc, kb int }

// blockCut is one block's cut, read-only once cached.
type blockCut struct {
	groups  []tapGroup
	slivers []sliverRuns
}

// cutsFor returns the cuts kept for image in (a new set if there are
// none), or nil without a cache.
func (c *ConvKernelCache) cutsFor(in []float32) *cutSet {
	if c == nil || len(in) == 0 {
		return nil
	}
	k := &c.cuts
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, s := range k.sets {
		if s.img == &in[0] && s.n == len(in) {
			k.sets = append(append(k.sets[:i], k.sets[i+1:]...), s)
			return s
		}
	}
	if len(k.sets) == cutImages {
		k.sets = append(k.sets[:0], k.sets[1:]...)
	}
	s := &cutSet{mu: &k.mu, img: &in[0], n: len(in), cuts: map[cutKey]*blockCut{}}
	k.sets = append(k.sets, s)
	return s
}

// cutSet is the cuts of one image, shared by the calls on it.
type cutSet struct {
	mu   *sync.Mutex // the cache's
	img  *float32
	n    int
	cuts map[cutKey]*blockCut
}

func (s *cutSet) get(key cutKey) *blockCut {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cuts[key]
}

// put keeps a copy of a block's groups and slivers (whose runs the
// caller reuses for its next block).
func (s *cutSet) put(key cutKey, groups []tapGroup, slivers []sliverRuns) {
	if s == nil {
		return
	}
	bc := &blockCut{groups: append([]tapGroup(nil), groups...), slivers: make([]sliverRuns, len(slivers))}
	for i, sl := range slivers {
		sl.runs = append([]tapRun(nil), sl.runs...)
		bc.slivers[i] = sl
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cuts[key] = bc
}
