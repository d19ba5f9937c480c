// Package progress draws a one-line progress bar for training loops.
package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Bar is a progress bar redrawn in place (with \r) at most ten times a
// second, so a log that is not a terminal stays short.
type Bar struct {
	w      io.Writer
	label  string
	total  int
	start  time.Time
	drawn  time.Time
	step   int
	loss   float32
	active bool
}

// New starts a bar of total steps on w.
func New(w io.Writer, label string, total int) *Bar {
	return &Bar{w: w, label: label, total: max(total, 1), start: time.Now()}
}

// Update records that step steps are done, the last with this loss.
func (b *Bar) Update(step int, loss float32) {
	b.step, b.loss = step, loss
	if now := time.Now(); now.Sub(b.drawn) >= 100*time.Millisecond || step == b.total {
		b.drawn = now
		b.draw()
	}
}

func (b *Bar) draw() {
	const width = 30
	filled := width * b.step / b.total
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", width-filled)
	rate := float64(b.step) / max(time.Since(b.start).Seconds(), 1e-9)
	fmt.Fprintf(b.w, "\r%s [%s] %d/%d loss %.4f %.0f steps/s ", b.label, bar, b.step, b.total, b.loss, rate)
	b.active = true
}

// Clear erases the bar so that other output starts on a clean line; the
// next Update draws it again.
func (b *Bar) Clear() {
	if b.active {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", 100))
		b.active = false
		b.drawn = time.Time{}
	}
}

// Done draws the final state and ends the line.
func (b *Bar) Done() {
	b.draw()
	fmt.Fprintln(b.w)
	b.active = false
}
