package kernels

import "slices"

// How a Winograd convolution (conv_winograd.go) is cut into bands and
// channel ranges, and shared among the threads.

// winoPlan is a Winograd convolution's cut into work: bands of tile
// rows, each over a range of output channels.
type winoPlan struct {
	p                    *Conv
	m, a, n2             int // output tile, input patch, transformed points (a²)
	tilesH, tilesW       int
	rows                 int // tile rows (over the batch)
	bandRows, bands      int // tile rows a band, bands
	splits, cols         int // output channel ranges, channels a range (whole pairs of slivers)
	oh, ow, c, k, pixels int
}

// newWinoPlan cuts convolution p on F(m×m, 3×3) for threads: bands of
// the most tile rows whose working set fits bandBytes, rebalanced
// (balance) where there are few of them for the threads.
func newWinoPlan(p *Conv, m, threads int) *winoPlan {
	w := &winoPlan{p: p, m: m, a: m + 2, n2: winoPoints(m), c: p.InChannels, k: p.OutChannels, oh: p.OutSpatial[0], ow: p.OutSpatial[1]}
	w.tilesH, w.tilesW = (w.oh+m-1)/m, (w.ow+m-1)/m
	w.rows = p.Batch * w.tilesH
	w.pixels = w.oh * w.ow
	perRow := w.tilesW * w.n2 * (w.c + w.k) * 4
	most := max(1, min(w.rows, w.bandBytes()/perRow)) // tile rows a band may have
	w.bandRows, w.splits, w.cols = most, 1, w.k
	if threads > 1 && threads <= 16 && w.rows <= 8*threads*most {
		w.balance(most, threads) // (more threads take many bands in turn)
	}
	w.bands = (w.rows + w.bandRows - 1) / w.bandRows
	return w
}

// balance cuts the plan's tile rows into bands of at most most rows and
// its output channels into ranges so that the threads share the work
// evenly: a layer with a few bands (a small image at batch 1) left a
// thread idle a third of the time. It takes the cut whose last thread
// ends first, the threads taking items in order as they come free, an
// item costing (tiles + 8)·(channels + C/4): its products, its input
// transforms, and a fixed cost that keeps bands from thinning out.
func (w *winoPlan) balance(most, threads int) {
	pair := 2 * sgemmNR
	best := -1
	for splits := 1; splits <= min(threads, winoMaxSplits); splits++ {
		cols := (w.k/splits + pair - 1) / pair * pair
		if splits > 1 && (cols < pair || (w.k+cols-1)/cols != splits) {
			continue
		}
		// Bands of most rows down to a few: thinner ones only add items
		// (the search is bounded: it runs on every call).
		for rows := most; rows >= max(1, most-winoBandChoices+1); rows-- {
			if (w.rows+rows-1)/rows*splits > winoMaxItems*threads {
				break
			}
			span := w.makespan(rows, splits, cols, threads)
			if best < 0 || span < best {
				best, w.bandRows, w.splits, w.cols = span, rows, splits, cols
			}
		}
	}
}

// The bounds of balance's search: output channel ranges, band heights
// tried, and items a thread.
const (
	winoMaxSplits   = 4
	winoBandChoices = 16
	winoMaxItems    = 32
)

// makespan is when the last of threads ends, in balance's cost units,
// with bands of rows tile rows and splits ranges of cols channels.
func (w *winoPlan) makespan(rows, splits, cols, threads int) int {
	free := make([]int, threads)
	for r0 := 0; r0 < w.rows; r0 += rows {
		tiles := min(rows, w.rows-r0) * w.tilesW
		for s := range splits {
			nc := min(cols, w.k-s*cols)
			t := 0
			for i := range free {
				if free[i] < free[t] {
					t = i
				}
			}
			free[t] += (tiles + 8) * (nc + w.c/4)
		}
	}
	return slices.Max(free)
}

// winoThreads is how many of threads convolution p runs on: one below
// the direct path's threshold (the same layers split).
func winoThreads(p *Conv, threads int) int {
	if m, k := convRowsDepth(p); runsAlone(2*m*p.OutChannels*k, directParallelFlops) {
		return 1
	}
	return threads
}

// bandBytes is what a band's transformed tiles and products may take:
// winoBandBytes, so that they stay in L2, or a quarter of the transformed
// kernel where that is more. Every band reads all of the transformed
// kernel; one of many megabytes (512 channels each way: 16 MiB) read
// again for bands of one tile row cost more than the band's spills:
// VGG's 14²×512→512 at batch 1 took 1.23 of the direct time in bands
// of one row, 0.57 in one band (in one process, alternated; 28²×512 0.63,
// 7²×512 0.85).
func (w *winoPlan) bandBytes() int {
	return max(winoBandBytes, w.n2*w.c*w.k)
}

// items is the plan's units of work: bands times channel ranges.
func (w *winoPlan) items() int { return w.bands * w.splits }
