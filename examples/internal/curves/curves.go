// Package curves plots training curves (loss and accuracy against steps)
// into a PNG with gonum/plot.
package curves

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one curve.
type Series struct {
	Name string
	X, Y []float64
}

// colors tell the curves apart.
var colors = []color.RGBA{{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255}}

// WritePNG writes two panels side by side, losses on the left and
// accuracies on the right, to path.
func WritePNG(path, title string, losses, accuracies []Series) error {
	left, err := panel(title+": loss", "loss", losses)
	if err != nil {
		return err
	}
	right, err := panel(title+": accuracy", "accuracy", accuracies)
	if err != nil {
		return err
	}
	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func panel(title, ylabel string, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "step"
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("curve %s has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c := colors[i%len(colors)]
		line.Color, points.Color = c, c
		points.Radius = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add(s.Name, line)
	}
	p.Legend.Top = true
	return p, nil
}
