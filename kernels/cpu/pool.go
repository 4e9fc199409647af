package cpu

import (
	"sync"
	"sync/atomic"
)

// pool is a persistent set of worker goroutines. Run splits work into parts and runs
// them on the workers and the calling goroutine; calls must not overlap.
type pool struct {
	workers int
	wake    chan struct{}
	wg      sync.WaitGroup
	fn      func(part, worker int)
	parts   int
	next    atomic.Int64
	once    sync.Once
}

func newPool(threads int) *pool {
	p := &pool{workers: threads, wake: make(chan struct{})}
	for w := 1; w < threads; w++ {
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(worker int) {
	for range p.wake {
		p.drain(worker)
		p.wg.Done()
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
	helpers := min(p.workers-1, parts-1)
	p.wg.Add(helpers)
	for range helpers {
		p.wake <- struct{}{}
	}
	p.drain(0)
	p.wg.Wait()
	p.fn = nil
}

// Close stops the workers.
func (p *pool) Close() { p.once.Do(func() { close(p.wake) }) }
