package cpu

import (
	"sync/atomic"
	"testing"
)

// TestPoolStress runs many small Runs back to back, as a decode step does, and checks
// every part ran exactly once per Run; under -race it also checks the pool's
// hand-over of fn and parts between Runs.
func TestPoolStress(t *testing.T) {
	for _, threads := range []int{2, 3, 4} {
		p := newPool(threads)
		counts := make([]atomic.Int32, 64)
		n := 20000
		if testing.Short() {
			n = 5000
		}
		for r := range n {
			parts := 2 + r%len(counts)/2
			p.Run(parts, func(part, worker int) {
				if worker < 0 || worker >= threads {
					t.Errorf("worker %d of %d", worker, threads)
				}
				counts[part].Add(1)
			})
			for i := range parts {
				if c := counts[i].Swap(0); c != 1 {
					t.Fatalf("threads %d, run %d: part %d ran %d times", threads, r, i, c)
				}
			}
		}
		p.Close()
	}
}
