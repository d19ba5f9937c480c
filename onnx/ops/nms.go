package ops

import (
	"sort"

	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
)

// NonMaxSuppression runs on the host: the number of selected boxes
// depends on the data.

func init() {
	Register(Op{Name: "NonMaxSuppression", Since: 10, Host: hostNonMaxSuppression})
}

type nmsBox struct{ y1, x1, y2, x2 float64 }

func (b nmsBox) area() float64 { return (b.y2 - b.y1) * (b.x2 - b.x1) }

func nmsIoU(a, b nmsBox) float64 {
	aa, ab := a.area(), b.area()
	if aa <= 0 || ab <= 0 {
		return 0
	}
	iy1, ix1 := max(a.y1, b.y1), max(a.x1, b.x1)
	iy2, ix2 := min(a.y2, b.y2), min(a.x2, b.x2)
	if iy2 <= iy1 || ix2 <= ix1 {
		return 0
	}
	inter := (iy2 - iy1) * (ix2 - ix1)
	return inter / (aa + ab - inter)
}

func hostNonMaxSuppression(h *HostCtx) error {
	boxes, scores := h.Tensor(0), h.Tensor(1)
	if boxes == nil || scores == nil || boxes.IsString() || scores.IsString() {
		return h.Errorf("boxes and scores are required numeric tensors")
	}
	bd, sd := boxes.Dims(), scores.Dims()
	if len(bd) != 3 || bd[2] != 4 || len(sd) != 3 || sd[0] != bd[0] || sd[2] != bd[1] {
		return h.Errorf("boxes %v and scores %v: want [B, N, 4] and [B, C, N]", bd, sd)
	}
	maxOut := int64(0)
	if t := h.Tensor(2); t != nil && !t.IsString() && t.Lit.Len() > 0 {
		maxOut = t.Lit.GetInt64(0)
	}
	iouTh := 0.0
	if t := h.Tensor(3); t != nil && !t.IsString() && t.Lit.Len() > 0 {
		iouTh = t.Lit.GetFloat64(0)
	}
	useScoreTh, scoreTh := false, 0.0
	if t := h.Tensor(4); t != nil && !t.IsString() && t.Lit.Len() > 0 {
		useScoreTh, scoreTh = true, t.Lit.GetFloat64(0)
	}
	center := h.Node.Int("center_point_box", 0) != 0
	nb, nc, n := int(sd[0]), int(sd[1]), int(sd[2])
	var sel []int64
	for b := 0; b < nb; b++ {
		bx := make([]nmsBox, n)
		for i := range bx {
			o := (b*n + i) * 4
			v0, v1, v2, v3 := boxes.Lit.GetFloat64(o), boxes.Lit.GetFloat64(o+1), boxes.Lit.GetFloat64(o+2), boxes.Lit.GetFloat64(o+3)
			if center { // [x_center, y_center, width, height]
				bx[i] = nmsBox{v1 - v3/2, v0 - v2/2, v1 + v3/2, v0 + v2/2}
			} else {
				bx[i] = nmsBox{min(v0, v2), min(v1, v3), max(v0, v2), max(v1, v3)}
			}
		}
		for c := 0; c < nc; c++ {
			if maxOut <= 0 {
				continue
			}
			base := (b*nc + c) * n
			var cand []int
			for i := 0; i < n; i++ {
				if !useScoreTh || scores.Lit.GetFloat64(base+i) > scoreTh {
					cand = append(cand, i)
				}
			}
			sort.SliceStable(cand, func(p, q int) bool {
				return scores.Lit.GetFloat64(base+cand[p]) > scores.Lit.GetFloat64(base+cand[q])
			})
			var kept []int
			for _, i := range cand {
				if int64(len(kept)) >= maxOut {
					break
				}
				ok := true
				for _, k := range kept {
					if nmsIoU(bx[i], bx[k]) > iouTh {
						ok = false
						break
					}
				}
				if ok {
					kept = append(kept, i)
					sel = append(sel, int64(b), int64(c), int64(i))
				}
			}
		}
	}
	out := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, int64(len(sel)/3), 3))
	for i, v := range sel {
		out.SetInt64(i, v)
	}
	h.Set(0, onnx.LiteralValue(out))
	return nil
}
