package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"llmbench/engine/model"
	"llmbench/engine/sample"
)

// Scheduler defaults (vLLM's names: --max-num-seqs, --max-num-batched-tokens).
//
// DefaultMaxNumSeqs is 16: a decode step of up to 16 running sequences is one matmul
// per weight matrix, and kernels/cpu reads each weight once per step whatever the
// number of tokens (tiles of 16 rows times groups of four tokens), so batching raises
// throughput, and a token's logits do not depend on what it is batched with.
const (
	DefaultMaxNumSeqs          = 16
	DefaultMaxNumBatchedTokens = 512
	DefaultSeqContext          = 4096
)

// ErrClosed reports a Generate call on an engine that is closed or closing.
var ErrClosed = errors.New("engine: closed")

// SchedulerStats is a snapshot of the continuous-batching scheduler, for /metrics.
type SchedulerStats struct {
	Running, Waiting int // sequences holding a KV slot / submitted and waiting for one
	// KVBlocksUsed and KVBlocksTotal count KV memory in blocks; until the cache is
	// paged, a block is one sequence's contiguous slot of SeqContext positions.
	KVBlocksUsed  int
	KVBlocksTotal int
	// PrefixQueryTokens and PrefixHitTokens count prompt tokens looked up in the prefix
	// cache and found there, since the start (0 until there is a prefix cache).
	PrefixQueryTokens, PrefixHitTokens int64
}

// SchedulerStats returns the scheduler's running and waiting sequences and its KV
// slots in use; engine/server's /metrics reads it.
func (e *Engine) SchedulerStats() SchedulerStats {
	s := e.sched
	return SchedulerStats{
		Running: int(s.nRunning.Load()), Waiting: int(s.nWaiting.Load()),
		KVBlocksUsed: int(s.nRunning.Load()), KVBlocksTotal: e.opts.MaxNumSeqs,
	}
}

// event is what the scheduler hands a request's Generate call: a sampled token (with
// the time its logits were ready and, on the last one, why generation stopped) or an
// error that ends the request.
type event struct {
	id   int32
	at   time.Time
	stop string
	err  error
}

// outbox carries events from the scheduler goroutine to one Generate call without
// ever blocking the scheduler: a slow consumer only lets its events pile up.
type outbox struct {
	mu   sync.Mutex
	evs  []event
	wake chan struct{} // capacity 1: "there is something to take"
}

func (o *outbox) push(ev event) {
	o.mu.Lock()
	o.evs = append(o.evs, ev)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// take moves the pending events into buf (reused) and returns it.
func (o *outbox) take(buf []event) []event {
	o.mu.Lock()
	buf = append(buf[:0], o.evs...)
	o.evs = o.evs[:0]
	o.mu.Unlock()
	return buf
}

// seq is one request inside the scheduler. Only the scheduler goroutine touches its
// fields after submission, except ctx (read by both) and out.
type seq struct {
	ctx     context.Context // cancelled when the request's caller gives up
	ids     []int32         // the prompt
	req     Request
	smp     *sample.Sampler
	history []int32 // prompt and generated tokens, for the sampler's penalties
	cache   *model.Cache
	pos     int      // tokens in the cache
	next    [1]int32 // the token to feed in the next decode step
	gen     int      // tokens generated
	out     outbox
}

// prefilling reports whether prompt tokens remain to be read.
func (q *seq) prefilling() bool { return q.pos < len(q.ids) }

// scheduler runs continuous batching: one goroutine owns the backend and steps every
// running sequence together (a decode token each, plus prompt chunks of newly admitted
// ones within the token budget); requests join and leave between steps.
type scheduler struct {
	e      *Engine
	submit chan *seq // unbuffered: a send succeeds only when the loop holds the request
	quit   chan struct{}
	done   chan struct{}
	start  sync.Once
	stop   sync.Once

	nRunning, nWaiting atomic.Int64

	// Owned by the loop goroutine.
	queue  []*seq         // waiting, first come first served
	active []*seq         // holding a KV slot, in admission order
	free   []*model.Cache // KV slots not in use
	slots  int            // KV slots allocated so far (≤ MaxNumSeqs)
	state  *model.State
	batch  []model.Seq
	owners []*seq // owners[i] is the sequence of batch[i]

	beforeStep func() // tests only: called by the loop before each step
}

func newScheduler(e *Engine) *scheduler {
	return &scheduler{e: e, submit: make(chan *seq), quit: make(chan struct{}), done: make(chan struct{})}
}

// close stops the loop (if it ever started), failing the requests it holds.
func (s *scheduler) close() {
	s.stop.Do(func() { close(s.quit) })
	s.start.Do(func() { close(s.done) }) // never started: nothing to wait for
	<-s.done
}

// enqueue hands q to the loop, starting it on first use.
func (s *scheduler) enqueue(ctx context.Context, q *seq) error {
	s.start.Do(func() { go s.loop() })
	select {
	case s.submit <- q:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return ErrClosed
	case <-s.quit:
		return ErrClosed
	}
}

func (s *scheduler) loop() {
	defer close(s.done)
	o := s.e.opts
	s.state = s.e.Model.NewState(o.MaxNumBatchedTokens)
	s.state.Flash = o.FlashAttn
	for {
		if len(s.active) == 0 && len(s.queue) == 0 {
			s.publish()
			select {
			case q := <-s.submit:
				s.queue = append(s.queue, q)
			case <-s.quit:
				return
			}
		}
	intake:
		for {
			select {
			case q := <-s.submit:
				s.queue = append(s.queue, q)
			case <-s.quit:
				s.failAll(ErrClosed)
				return
			default:
				break intake
			}
		}
		s.reap()
		s.admit()
		s.publish()
		if len(s.active) > 0 {
			if s.beforeStep != nil {
				s.beforeStep()
			}
			s.step()
		}
	}
}

func (s *scheduler) publish() {
	s.nRunning.Store(int64(len(s.active)))
	s.nWaiting.Store(int64(len(s.queue)))
}

// reap drops the requests whose callers have gone (cancelled, or returned after an
// error from emit), returning their KV slots at once.
func (s *scheduler) reap() {
	s.queue = deleteFunc(s.queue, func(q *seq) bool { return q.ctx.Err() != nil })
	s.active = deleteFunc(s.active, func(q *seq) bool {
		if q.ctx.Err() == nil {
			return false
		}
		s.release(q)
		return true
	})
}

// deleteFunc is slices.DeleteFunc that also clears the tail, so that no finished
// request stays reachable from the backing array.
func deleteFunc(qs []*seq, del func(*seq) bool) []*seq {
	k := 0
	for _, q := range qs {
		if !del(q) {
			qs[k] = q
			k++
		}
	}
	clear(qs[k:])
	return qs[:k]
}

func (s *scheduler) release(q *seq) {
	if q.cache != nil {
		s.free = append(s.free, q.cache)
		q.cache = nil
	}
}

// admit moves waiting requests, oldest first, into the running set while a KV slot is
// free; a request that cannot get one waits (never over-committing memory).
func (s *scheduler) admit() {
	o := s.e.opts
	for len(s.queue) > 0 && len(s.active) < o.MaxNumSeqs {
		q := s.queue[0]
		if n := len(s.free); n > 0 {
			q.cache = s.free[n-1]
			s.free = s.free[:n-1]
		} else {
			c, err := s.e.Model.NewCache(o.SeqContext, o.KVType)
			if err != nil {
				q.out.push(event{err: fmt.Errorf("engine: KV cache: %w", err)})
				s.queue[0] = nil
				s.queue = s.queue[1:]
				continue
			}
			s.slots++
			q.cache = c
		}
		s.queue[0] = nil
		s.queue = s.queue[1:]
		q.pos, q.gen = 0, 0
		s.active = append(s.active, q)
	}
}

// step runs one forward pass: the decode token of every sequence past its prompt,
// then prompt chunks of the others in admission order while the token budget lasts.
func (s *scheduler) step() {
	budget := s.e.opts.MaxNumBatchedTokens
	s.batch, s.owners = s.batch[:0], s.owners[:0]
	for _, q := range s.active {
		if !q.prefilling() {
			s.batch = append(s.batch, model.Seq{Cache: q.cache, Start: q.pos, Tokens: q.next[:], Logits: true})
			s.owners = append(s.owners, q)
			budget--
		}
	}
	for _, q := range s.active {
		if budget <= 0 {
			break
		}
		if q.prefilling() {
			n := min(len(q.ids)-q.pos, budget)
			s.batch = append(s.batch, model.Seq{Cache: q.cache, Start: q.pos, Tokens: q.ids[q.pos : q.pos+n], Logits: q.pos+n == len(q.ids)})
			s.owners = append(s.owners, q)
			budget -= n
		}
	}
	s.e.mu.Lock()
	logits, err := s.e.Model.ForwardBatch(s.e.be, s.state, s.batch)
	s.e.mu.Unlock()
	at := time.Now()
	defer func() { clear(s.batch); clear(s.owners) }() // keep no request reachable between steps
	if err != nil {
		for _, q := range s.owners {
			q.out.push(event{err: err})
			s.release(q)
		}
		s.active = deleteFunc(s.active, func(q *seq) bool { return q.cache == nil })
		return
	}
	vocab := s.e.Model.Vocab
	row, finished := 0, false
	for i, q := range s.owners {
		q.pos += len(s.batch[i].Tokens) // now in the cache
		if !s.batch[i].Logits {
			continue // more of the prompt to read
		}
		l := logits[row*vocab : (row+1)*vocab]
		row++
		id := q.smp.Sample(l, q.history)
		q.history = append(q.history, id)
		q.gen++
		ev := event{id: id, at: at}
		switch {
		case s.e.Tok.IsEOG(id) && !q.req.IgnoreEOS:
			ev.stop = "eos"
		case q.req.MaxTokens > 0 && q.gen >= q.req.MaxTokens:
			ev.stop = "length"
		case q.pos+1 >= q.cache.Context: // prompt + generated tokens fill the context
			ev.stop = "context"
		}
		q.out.push(ev)
		if ev.stop != "" {
			s.release(q)
			finished = true
		}
		q.next[0] = id
	}
	if finished {
		s.active = deleteFunc(s.active, func(q *seq) bool { return q.cache == nil })
	}
}

// failAll ends every request the loop holds with err.
func (s *scheduler) failAll(err error) {
	for _, q := range s.active {
		q.out.push(event{err: err})
		s.release(q)
	}
	for _, q := range s.queue {
		q.out.push(event{err: err})
	}
	s.active, s.queue = nil, nil
	s.publish()
}
