package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// poolSpin is how long an idle worker (or Run's caller, waiting for the workers) polls
// before it parks. Waking a parked goroutine costs the caller several microseconds
// (BenchmarkRunSplit), and a step of a small model runs its parallel operations a few
// microseconds to tens of microseconds apart, with serial operations between: a spin of
// a few microseconds (4096 polls, the old count) parked the helper between nearly every
// two of them, so two threads ran TinyStories-656K's 64-token prompt no faster than one
// (~20 context switches per prompt; quiet AMD EPYC, 2 cores). llama.cpp spins far longer
// (1024·128·poll PAUSE rounds, tens of milliseconds); 200 µs covers the gaps within a
// step and still parks the helpers soon after a step, so they do not hold the cores
// between requests or take them from the rest of the process for long.
const poolSpin = 200 * time.Microsecond

// spinCheck is how many polls pass between two looks at the clock while spinning.
const spinCheck = 64

// yieldPolls is how many polls an idle worker makes between two offers of its core to
// the other goroutines (about 10 µs). The workers fill every scheduler slot (P), so
// a goroutine that wakes mid-step (a telemetry tick, a terminal write, an HTTP
// handler) otherwise waits for the runtime to preempt one of them, mid-part, and a
// system call it then makes hands that slot around again. With another goroutine
// reading /dev/zero every 10 ms (open, read, close), llama-1b Q4_0 decoded 5.6–7.6 %
// faster with the offers than without; alone, the same within noise (in-process turns,
// 2-core AMD EPYC Zen 5).
const yieldPolls = 4096

// pool is a persistent set of worker goroutines. Run splits work into parts and runs
// them on the workers and the calling goroutine; calls must not overlap.
//
// A Run is open to helpers from its start until its caller has claimed the last part
// itself: a helper joins an open Run (state counts it) before it looks at fn and
// parts, and the caller, once it finds no part left, closes the Run and waits only for
// the helpers that joined. So a helper that is not running when a Run starts (its
// core taken by another process, or still parked) never delays it: the caller does the
// parts alone, where waiting for every helper made each step wait for the scheduler.
type pool struct {
	workers int
	fn      func(part, worker int)
	parts   int
	next    atomic.Int64
	// state is the Run's generation (high 32 bits), whether it is closed (bit 31) and
	// how many helpers joined it (low 31 bits).
	state    atomic.Uint64
	finished atomic.Int32  // helpers of the current Run that are done with it
	ended    atomic.Uint64 // the generation of the last Run that returned
	quit     atomic.Bool
	// parked holds parkTag of the generation whose Run's caller is (about to be)
	// blocked on done, 0 when none. Tagging it with the generation matters: a helper that finished
	// generation N may be descheduled before it wakes the caller; by then Run N has
	// returned and Run N+1 may be parked, and an untagged flag would let that late
	// helper wake Run N+1 before Run N+1's helpers are done.
	parked  atomic.Uint64
	done    chan struct{}
	helpers []helper
	once    sync.Once
	splits  int          // Runs handed to the helpers (tests: which steps went parallel)
	offers  atomic.Int64 // idle helpers' offers of their core to other goroutines (tests)
	parks   atomic.Int64 // helpers' parks (tests)
	// spin is how long (in nanoseconds) an idle worker or waiting caller polls before it
	// parks: poolSpin unless SetPoll changed it.
	spin atomic.Int64
}

// DefaultPoll is llama.cpp's default --poll level, at which the pool spins for poolSpin
// before parking.
const DefaultPoll = 50

// setPoll sets the busy-wait level as llama.cpp's --poll (0 to 100): the time spent
// polling before parking scales with it, poolSpin at DefaultPoll, none at 0 (park at once).
func (p *pool) setPoll(level int) {
	p.spin.Store(int64(poolSpin) * int64(min(max(level, 0), 100)) / DefaultPoll)
}

// spinner counts one idle poll after another and says when the poll budget is spent.
type spinner struct {
	polls int
	start time.Time
}

// more reports whether the caller may poll again within budget nanoseconds of its
// first poll (or of its first poll after restart); it reads the clock once every
// spinCheck polls.
func (s *spinner) more(budget int64) bool {
	if budget <= 0 {
		return false
	}
	s.polls++
	if s.polls%spinCheck != 1 {
		return true
	}
	if s.start.IsZero() {
		s.start = time.Now()
		return true
	}
	return time.Since(s.start) < time.Duration(budget)
}

// restart makes the budget start again at the next look at the clock; the polls go on
// being counted (the offers of the core follow them).
func (s *spinner) restart() { s.start = time.Time{} }

const (
	runClosed  = 1 << 31
	joinedMask = runClosed - 1
)

// parkTag is parked's value for generation gen: never 0, also for generation 0 when
// the 32-bit count wraps.
func parkTag(gen uint64) uint64 { return gen | 1<<32 }

// helper is one worker's parking state, padded to its own cache line.
type helper struct {
	parked atomic.Int32 // 1 while the worker is (about to be) blocked on wake
	wake   chan struct{}
	_      [48]byte
}

func newPool(threads int) *pool {
	p := &pool{workers: threads, helpers: make([]helper, threads), done: make(chan struct{}, 1)}
	p.spin.Store(int64(poolSpin))
	for w := 1; w < threads; w++ {
		p.helpers[w].wake = make(chan struct{}, 1)
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(worker int) {
	h := &p.helpers[worker]
	var seen uint64
	for {
		var sp spinner
		for p.state.Load()>>32 == seen {
			budget := p.spin.Load()
			if p.ended.Load() != seen && budget > 0 {
				// The Run this worker saw last has not returned: its caller is still in a
				// part, so the step goes on and the next Run may come at any moment. The
				// budget starts when the Run returns. Counted from this worker's last
				// part instead, it ran out whenever the caller's thread lost its core
				// for a few hundred microseconds (on a 2-vCPU AMD EPYC Zen 5 VM, dozens
				// of times a second): the helper parked, and the next products ran
				// without it until a wake reached it. In-process turns of llama-1b
				// decode (48 tokens; eleven runs of 20–60 turns, Q4_0, Q4_K_M, Q8_0):
				// 1.001–1.043× faster (mean 1.011), helper wakes about halved.
				sp.restart()
			}
			if sp.more(budget) {
				if sp.polls%yieldPolls == 0 {
					p.offers.Add(1)
					runtime.Gosched()
				}
				continue
			}
			p.parks.Add(1)
			h.parked.Store(1)
			if p.state.Load()>>32 != seen && h.parked.CompareAndSwap(1, 0) {
				break
			}
			// A wake can be late: Run N+1 starts, this worker sees it, serves it and
			// parks again before Run N+1's wakeParked finds it parked. So the loop
			// checks the generation again rather than take a wake as a new Run.
			<-h.wake
		}
		if p.quit.Load() {
			return
		}
		s := p.state.Load()
		seen = s >> 32
		if !p.join(s) {
			continue // closed already: the caller did every part
		}
		p.drain(worker)
		f := uint64(p.finished.Add(1))
		if s := p.state.Load(); s>>32 == seen && s&runClosed != 0 && s&joinedMask == f && p.parked.CompareAndSwap(parkTag(seen), 0) {
			p.done <- struct{}{}
		}
	}
}

// join adds the calling helper to the Run of state s if that Run is still open.
func (p *pool) join(s uint64) bool {
	gen := s >> 32
	for ; s>>32 == gen && s&runClosed == 0; s = p.state.Load() {
		if p.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
	return false
}

// drain claims parts until none are left.
func (p *pool) drain(worker int) {
	for {
		i := int(p.next.Add(1) - 1)
		if i >= p.parts {
			return
		}
		p.fn(i, worker)
	}
}

// wakeParked wakes the helpers that have parked.
func (p *pool) wakeParked() {
	for w := 1; w < p.workers; w++ {
		if h := &p.helpers[w]; h.parked.CompareAndSwap(1, 0) {
			h.wake <- struct{}{}
		}
	}
}

// Run calls fn(part, worker) for every part in [0, parts); worker is in [0, workers)
// and no two concurrent calls share a worker index, so fn may use per-worker scratch.
func (p *pool) Run(parts int, fn func(part, worker int)) {
	if p.workers == 1 || parts <= 1 {
		for i := range parts {
			fn(i, 0)
		}
		return
	}
	p.splits++
	p.fn, p.parts = fn, parts
	p.next.Store(0)
	p.finished.Store(0)
	g := (p.state.Load()>>32 + 1) & (1<<32 - 1)
	p.state.Store(g << 32)
	p.wakeParked()
	p.drain(0)
	// Close the Run to helpers that have not joined, then wait for those that did.
	var joined int32
	for {
		s := p.state.Load()
		if p.state.CompareAndSwap(s, s|runClosed) {
			joined = int32(s & joinedMask)
			break
		}
	}
	spin := p.spin.Load()
	var sp spinner
	for p.finished.Load() != joined {
		if sp.more(spin) {
			continue
		}
		p.parked.Store(parkTag(g))
		if p.finished.Load() == joined && p.parked.CompareAndSwap(parkTag(g), 0) {
			break
		}
		<-p.done
		break
	}
	p.ended.Store(g)
	p.fn = nil
}

// Close stops the workers.
func (p *pool) Close() {
	p.once.Do(func() {
		p.quit.Store(true)
		p.state.Add(1 << 32)
		p.wakeParked()
	})
}

// minParallelWork is the least work a step must carry for RunWork to hand its parts to
// the helpers, in multiply-adds (a matrix product's rows·cols·tokens; the other steps
// count what they do in the same unit; a small model's steps weigh less: workUnits).
// Below it the hand-over costs more than the helper saves, and a small model's step is
// made of such ops: with every op split, stories260K decoded at a third of its
// one-thread speed with two threads.
//
// Measured with BenchmarkRunSplit (F32 dot products in 8 parts, the caller alone vs a
// two-thread pool; best of 3; 2-core Xeon VM with other processes running, load ~5):
// waking a parked helper costs the caller ~7 µs (8 Ki multiply-adds: 0.67 µs alone,
// 7.4 µs split), and a decode step's rare large ops find the helper parked; split
// Runs lost up to 128 Ki (9.4 vs 17.0 µs) and won from 256 Ki (49 vs 43 µs; 512 Ki:
// 324 vs 173 µs). Runs back to back, with the helper spinning, lost up to 128 Ki too.
const minParallelWork = 256 << 10

// RunWork is Run for a step of work multiply-adds in all: below minParallelWork the
// caller runs every part itself (as worker 0, in order), so the results are the same.
func (p *pool) RunWork(parts, work int, fn func(part, worker int)) {
	if work < minParallelWork {
		for i := range parts {
			fn(i, 0)
		}
		return
	}
	p.Run(parts, fn)
}
