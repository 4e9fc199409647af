package cpu

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"llmbench/kernels"
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

// TestRunWorkThreshold checks that a step below minParallelWork runs every part on
// the caller (worker 0) in order, and one above it still runs every part once.
func TestRunWorkThreshold(t *testing.T) {
	p := newPool(2)
	defer p.Close()
	var order []int
	p.RunWork(8, minParallelWork-1, func(part, worker int) {
		if worker != 0 {
			t.Errorf("part %d of a small step ran on worker %d", part, worker)
		}
		order = append(order, part)
	})
	for i, part := range order {
		if part != i {
			t.Fatalf("small step ran parts in order %v", order)
		}
	}
	if len(order) != 8 {
		t.Fatalf("small step ran %d of 8 parts", len(order))
	}
	var counts [8]atomic.Int32
	for range 100 {
		p.RunWork(8, minParallelWork, func(part, worker int) { counts[part].Add(1) })
	}
	for i := range counts {
		if c := counts[i].Load(); c != 100 {
			t.Fatalf("part %d ran %d times in 100 large steps", i, c)
		}
	}
}

// BenchmarkRunSplit measures where splitting a step over two threads starts to pay:
// work multiply-adds of F32 dot products in 8 parts, run by the caller alone
// ("serial") or over a two-thread pool ("split"). In "cold" cases each Run follows
// 50 µs of serial work, long enough for the helper to park, as a small model's
// decode step has between the few ops large enough to split; "hot" Runs follow one
// another. minParallelWork comes from it.
func BenchmarkRunSplit(b *testing.B) {
	p := newPool(2)
	defer p.Close()
	gap := func() {
		for t := time.Now(); time.Since(t) < 50*time.Microsecond; {
		}
	}
	for _, work := range []int{1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19} {
		x := make([]float32, work)
		y := make([]float32, work)
		for i := range x {
			x[i], y[i] = float32(i%13), float32(i%7)
		}
		var sink [8]float32
		const parts = 8
		fn := func(part, worker int) {
			n := work / parts
			sink[part] = dotF32s(x[part*n:(part+1)*n], y[part*n:(part+1)*n])
		}
		for _, cold := range []bool{false, true} {
			for _, split := range []bool{false, true} {
				name := fmt.Sprintf("work=%d/cold=%v/split=%v", work, cold, split)
				b.Run(name, func(b *testing.B) {
					var in time.Duration
					for b.Loop() {
						if cold {
							gap()
						}
						t := time.Now()
						if split {
							p.Run(parts, fn)
						} else {
							for i := range parts {
								fn(i, 0)
							}
						}
						in += time.Since(t)
					}
					b.ReportMetric(float64(in.Nanoseconds())/float64(b.N), "run-ns/op")
				})
			}
		}
	}
}

// TestSmallOpsStaySerial runs a decode step's ops at stories260K's and
// TinyStories-656K's shapes on two threads and checks that none is handed to the
// helper (an op too small to split runs on one thread), while a llama-1b-sized
// product is.
func TestSmallOpsStaySerial(t *testing.T) {
	c := New(2)
	defer c.Close()
	// mat multiplies a prepared rows×cols matrix (tiling it is load work, not a step's).
	mat := func(typ kernels.DType, rows, cols int) {
		w := benchMatrix(typ, rows, cols)
		before := c.pool.splits
		c.Prepare(w)
		c.pool.splits = before
		c.MatMul(make([]float32, rows), w, benchActs(cols), 1)
	}
	for _, s := range []struct {
		typ                                 kernels.DType
		embd, ff, vocab, heads, kvHeads, hd int
	}{
		{kernels.F32, 64, 172, 512, 8, 4, 8},     // stories260K
		{kernels.Q8_0, 128, 384, 2048, 8, 4, 16}, // TinyStories-656K Q8_0
		{kernels.F16, 128, 384, 1024, 8, 4, 16},  // an F16 step below its output product
	} {
		before := c.pool.splits
		mat(s.typ, s.embd, s.embd)
		mat(s.typ, s.ff, s.embd)
		mat(s.typ, s.embd, s.ff)
		mat(s.typ, s.vocab, s.embd)
		rng := rand.New(rand.NewPCG(1, 1))
		q, a, _, _ := attnCase(rng, kernels.F16, 1, 95, s.heads, s.kvHeads, s.hd)
		c.Attend(make([]float32, len(q)), q, a)
		c.SwiGLU(make([]float32, s.ff), make([]float32, s.ff), make([]float32, s.ff))
		if n := c.pool.splits - before; n != 0 {
			t.Errorf("%s embd %d: %d of a decode step's ops were split over the threads", s.typ, s.embd, n)
		}
	}
	before := c.pool.splits
	mat(kernels.F32, 2048, 2048)
	if c.pool.splits == before {
		t.Error("a 2048x2048 product ran on one thread")
	}
}

// TestSmallModelStepsStaySerial checks workUnits: a 64-token F16 product of
// TinyStories-656K's FFN shape splits over two threads on a backend no model was
// loaded into, stays on one thread once Prepare loaded a small model (all weights in
// cache), and splits again once the loaded weights exceed warmBytes.
func TestSmallModelStepsStaySerial(t *testing.T) {
	c := New(2)
	defer c.Close()
	const n = 64
	w := benchMatrix(kernels.F16, 384, 128)
	x, dst := benchActs(n*128), make([]float32, n*384)
	split := func() bool {
		before := c.pool.splits
		c.MatMul(dst, w, x, n)
		return c.pool.splits != before
	}
	if !split() {
		t.Fatal("no model loaded: a 384x128 product over 64 tokens ran on one thread")
	}
	c.Prepare(w)
	if split() {
		t.Error("a small model loaded: its 384x128 product over 64 tokens was split")
	}
	c.Prepare(benchMatrix(kernels.F16, 2304, 2048)) // 9 MiB more: past warmBytes
	if !split() {
		t.Error("a model past warmBytes loaded: the 384x128 product over 64 tokens ran on one thread")
	}
}

// TestPoolPoll checks --poll: the spin time scales with the level, and the pool
// still runs every part with no spinning at all (level 0) and with double spinning.
func TestPoolPoll(t *testing.T) {
	p := newPool(3)
	defer p.Close()
	for _, c := range []struct{ level, spin int64 }{{0, 0}, {50, int64(poolSpin)}, {100, 2 * int64(poolSpin)}, {150, 2 * int64(poolSpin)}} {
		p.setPoll(int(c.level))
		if got := p.spin.Load(); got != c.spin {
			t.Errorf("poll %d: spin %d; want %d", c.level, got, c.spin)
		}
		for range 200 {
			var sum atomic.Int64
			p.Run(16, func(part, _ int) { sum.Add(int64(part)) })
			if sum.Load() != 120 {
				t.Fatalf("poll %d: parts sum %d", c.level, sum.Load())
			}
		}
	}
}

// TestPoolOffersIdleCore: a helper spinning between Runs offers its core to other
// goroutines now and then; one that parks at once (poll 0) makes no offer.
func TestPoolOffersIdleCore(t *testing.T) {
	p := newPool(2)
	defer p.Close()
	p.setPoll(0)
	for range 20 {
		p.Run(4, func(int, int) {})
		time.Sleep(100 * time.Microsecond)
	}
	if n := p.offers.Load(); n != 0 {
		t.Fatalf("%d offers from a helper that never spins", n)
	}
	// A spin budget far longer than yieldPolls' polls take, even under the race
	// detector (with poolSpin's 200 µs a helper there parked before its 4096th poll).
	p.spin.Store(int64(5 * time.Second))
	p.Run(4, func(int, int) {})
	for deadline := time.Now().Add(10 * time.Second); p.offers.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("a spinning helper made no offer in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPoolHelperWaitsForRun: a helper done with its part of a Run whose caller is still
// busy (here for 40 spin budgets) does not park: its budget starts when the Run
// returns, so the next Run finds it polling; after that, idle, it parks as before.
func TestPoolHelperWaitsForRun(t *testing.T) {
	p := newPool(2)
	defer p.Close()
	const budget = 50 * time.Microsecond
	p.spin.Store(int64(budget))
	busy := func(d time.Duration) {
		for t0 := time.Now(); time.Since(t0) < d; {
		}
	}
	parked := func() { // wait until the idle helper has parked
		for deadline := time.Now().Add(10 * time.Second); p.helpers[1].parked.Load() != 1; {
			if time.Now().After(deadline) {
				t.Fatal("an idle helper did not park in 10 s")
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	served := 0
	for try := 0; try < 20 && served < 3; try++ {
		parked()
		parks, during := p.parks.Load(), int64(-1)
		var helped atomic.Bool
		p.Run(2, func(part, worker int) {
			if worker == 0 {
				busy(40 * budget)
				// Read before the Run returns: once it has, the idle helper may park at
				// any moment (this goroutine descheduled for a budget is enough).
				during = p.parks.Load() - parks
			} else {
				helped.Store(true)
			}
		})
		if !helped.Load() || during < 0 {
			continue // the helper was parked and woke too late, or took both parts
		}
		served++
		if during != 0 {
			t.Fatalf("the helper parked %d times while the Run it served was still running", during)
		}
	}
	if served == 0 {
		t.Skip("the helper never took a part (no spare core?)")
	}
}
