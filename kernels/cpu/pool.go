package cpu

import (
	"sync"
	"sync/atomic"
)

// poolSpin is how many times an idle worker (or Run's caller, waiting for the workers)
// polls before it parks, a few microseconds: decode runs ~160 small parallel
// steps per token, and waking a parked goroutine costs several microseconds each time.
// Spinning longer helps on an idle machine but hurts when other processes compete for
// the cores.
const poolSpin = 1 << 12

// pool is a persistent set of worker goroutines. Run splits work into parts and runs
// them on the workers and the calling goroutine; calls must not overlap.
//
// Each Run bumps gen; every helper, spinning or woken from its channel, takes part in
// every Run and then decrements active, so a Run returns only after all helpers have
// finished with it.
type pool struct {
	workers int
	fn      func(part, worker int)
	parts   int
	next    atomic.Int64
	gen     atomic.Uint64
	active  atomic.Int32
	quit    atomic.Bool
	// parked holds the generation whose Run's caller is (about to be) blocked on done,
	// 0 when none. Tagging it with the generation matters: a helper that finished
	// generation N may be descheduled between its last decrement and its wake-up of the
	// caller; by then Run N has returned and Run N+1 may be parked, and an untagged flag
	// would let that late helper wake Run N+1 before Run N+1's helpers are done.
	parked  atomic.Uint64
	done    chan struct{}
	helpers []helper
	once    sync.Once
}

// helper is one worker's parking state, padded to its own cache line.
type helper struct {
	parked atomic.Int32 // 1 while the worker is (about to be) blocked on wake
	wake   chan struct{}
	_      [48]byte
}

func newPool(threads int) *pool {
	p := &pool{workers: threads, helpers: make([]helper, threads), done: make(chan struct{}, 1)}
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
		for spins := 0; p.gen.Load() == seen; spins++ {
			if spins < poolSpin {
				continue
			}
			h.parked.Store(1)
			if p.gen.Load() != seen && h.parked.CompareAndSwap(1, 0) {
				break
			}
			// A wake can be late: Run N+1 bumps gen, this worker sees it, serves the
			// whole Run and parks again before Run N+1's wakeParked finds it parked. So
			// the loop checks gen again rather than take a wake as a new Run (taking it
			// made this worker drain and count down a Run twice: a data race on parts
			// and, when the count went wrong, a Run returning early or never).
			<-h.wake
		}
		if p.quit.Load() {
			return
		}
		seen = p.gen.Load()
		p.drain(worker)
		if p.active.Add(-1) == 0 && p.parked.CompareAndSwap(seen, 0) {
			p.done <- struct{}{}
		}
	}
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
	p.fn, p.parts = fn, parts
	p.next.Store(0)
	p.active.Store(int32(p.workers - 1))
	g := p.gen.Add(1)
	p.wakeParked()
	p.drain(0)
	for spins := 0; p.active.Load() != 0; spins++ {
		if spins < poolSpin {
			continue
		}
		p.parked.Store(g)
		if p.active.Load() == 0 && p.parked.CompareAndSwap(g, 0) {
			break
		}
		<-p.done
		break
	}
	p.fn = nil
}

// Close stops the workers.
func (p *pool) Close() {
	p.once.Do(func() {
		p.quit.Store(true)
		p.gen.Add(1)
		p.wakeParked()
	})
}
