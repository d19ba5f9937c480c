package kernels

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
)

// TestWorkersTakeLabels checks that a pool worker runs a task under the
// pprof labels given to LabelTasks, not the ones it was started with:
// the goroutine profile shows the worker running the task with them.
func TestWorkersTakeLabels(t *testing.T) {
	parallel(2, func(int) {}) // start the pool, unlabelled
	LabelTasks(pprof.WithLabels(context.Background(), pprof.Labels("hlo", "labelled-task")))
	defer LabelTasks(context.Background())
	var dump string
	parallel(2, func(i int) {
		if i == 0 { // the worker's task: the caller runs the last
			var b strings.Builder
			if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
				t.Error(err)
			}
			dump = b.String()
		}
	})
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, "kernels.worker") && strings.Contains(g, "TestWorkersTakeLabels") {
			if !strings.Contains(g, `"hlo":"labelled-task"`) {
				t.Fatalf("the worker ran the task without its labels:\n%s", g)
			}
			return
		}
	}
	t.Fatalf("no worker running the task in the goroutine profile:\n%s", dump)
}
