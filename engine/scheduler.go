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
	Running, Waiting int // sequences holding KV blocks / submitted and waiting for them
	// KVBlocksUsed and KVBlocksTotal count the paged KV cache's blocks: those held by
	// sequences, and the pool (free blocks that keep a cached prefix count as free).
	KVBlocksUsed  int
	KVBlocksTotal int
	// PrefixQueryTokens and PrefixHitTokens count prompt tokens looked up in the prefix
	// cache and found there, since the start (each request counted once, when it is
	// first admitted; both stay 0 with the prefix cache off).
	PrefixQueryTokens, PrefixHitTokens int64
	// Preemptions counts sequences sent back to the queue to free KV blocks (they
	// recompute their tokens when readmitted), since the start.
	Preemptions int64
	// Rolled counts sequences that ran past the rolling window (Options.Window) and
	// gave back their oldest blocks, since the start.
	Rolled int64
	// DecodeSteps holds the durations of the steps that decoded a token for at least
	// one sequence that had already generated one, since the start: the time between
	// two tokens of a sequence as the engine itself sees it (a step runs from the
	// loop taking up its work to its last token handed over). Sub two readings for a
	// span of time.
	DecodeSteps StepTimes
	// DraftedTokens and AcceptedTokens count the draft model's proposals and those
	// the model accepted, since the start (speculative decoding; 0 without a draft).
	DraftedTokens, AcceptedTokens int64
	// SeqSteps and SeqTokens count, since the start, the (sequence, step) pairs that
	// handed over tokens and the tokens they handed over: SeqTokens/SeqSteps is the
	// tokens per model step (1 without a draft).
	SeqSteps, SeqTokens int64
}

// SchedulerStats returns the scheduler's running and waiting sequences, its KV blocks
// in use, its prefix-cache counters and its decode step times; engine/server's
// /metrics reads it.
func (e *Engine) SchedulerStats() SchedulerStats {
	s := e.sched
	st := SchedulerStats{
		Running: int(s.nRunning.Load()), Waiting: int(s.nWaiting.Load()),
		KVBlocksUsed: int(s.nUsed.Load()), KVBlocksTotal: e.kv.Blocks,
		PrefixQueryTokens: s.nQuery.Load(), PrefixHitTokens: s.nHit.Load(), Preemptions: s.nPreempt.Load(),
		DraftedTokens: s.nDrafted.Load(), AcceptedTokens: s.nAccepted.Load(),
		SeqSteps: s.nSteps.Load(), SeqTokens: s.nTokens.Load(),
	}
	st.Rolled = s.nRolled.Load()
	s.stepMu.Lock()
	st.DecodeSteps = s.steps
	s.stepMu.Unlock()
	return st
}

// Settle returns once the scheduler is between two steps, so that every step that
// handed over a token before the call is counted in SchedulerStats (a request's last
// token reaches its caller before the step that emitted it is timed): read the stats
// after Settle to bound a span of work exactly.
func (e *Engine) Settle() { e.sched.between(e.sched.sync) }

// ResetPrefixCache drops every prefix-cache block that no running sequence holds, so
// that later requests find nothing that earlier ones left: the points of a sweep on
// one engine are then independent. It returns once the scheduler has done it
// (between two steps). The counters of SchedulerStats run on; read them before and
// after a span of work.
func (e *Engine) ResetPrefixCache() { e.sched.between(e.sched.reset) }

// between hands the scheduler loop (started if need be) a channel on ch, which the
// loop closes between two steps after doing what ch asks, and waits for that (or for
// the loop to stop).
func (s *scheduler) between(ch chan chan struct{}) {
	s.start.Do(func() { go s.loop() })
	done := make(chan struct{})
	select {
	case ch <- done:
		<-done
	case <-s.done:
	case <-s.quit:
	}
}

// event is what the scheduler hands a request's Generate call: a sampled token (with
// the time it was emitted and, on the last one, why generation stopped) or an error
// that ends the request.
type event struct {
	id      int32
	at      time.Time
	stop    string
	err     error
	logprob float32               // Request.Logprobs
	top     []sample.TokenLogprob // Request.TopLogprobs
	// The request's counts so far (Stats.Steps, Drafted, Accepted).
	steps, drafted, accepted int
	more                     bool // Token.More: another token of this step follows
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
	req     Request
	smp     *sample.Sampler
	toks    []int32 // the prompt, then the generated tokens (the sampler's history)
	nPrompt int
	blocks  []int32  // block table: the KV blocks of positions i*BlockSize…
	keys    []uint64 // prefix-cache keys of the full blocks of toks, as far as computed
	nReg    int      // blocks of the table entered into the prefix cache (or hit there)
	pos     int      // tokens whose keys and values are in the cache
	queried bool     // the prompt's prefix-cache lookup has been counted
	rolled  bool     // the rolling window has given back a block of q
	out     outbox

	// Speculative decoding (a draft model): the draft cache shares the block table.
	dpos     int             // tokens whose keys and values are in the draft's cache
	dsmp     *sample.Sampler // the draft's sampler (q's parameters, another seed)
	props    []int32         // this step's proposals
	qd       [][]float32     // the draft's distribution of each proposal (sampling)
	verify   []int32         // the tokens the model reads: the last one, then props
	hist     []int32         // toks and props, for the draft's sampler
	steps    int             // steps that handed over tokens
	drafted  int
	accepted int
}

// remaining returns the tokens to run before the next token can be sampled: one for
// a decode step, more while a prompt (or, after a preemption, prompt and generated
// tokens) is read.
func (q *seq) remaining() int { return len(q.toks) - q.pos }

// key returns the prefix-cache key of block i of q's tokens (which must be full).
func (q *seq) key(i, size int) uint64 {
	for len(q.keys) <= i {
		j := len(q.keys)
		var parent uint64
		if j > 0 {
			parent = q.keys[j-1]
		}
		q.keys = append(q.keys, chainKey(parent, q.toks[j*size:(j+1)*size]))
	}
	return q.keys[i]
}

// planned is one sequence's share of the next step.
type planned struct {
	q      *seq
	n      int
	decode bool // a decode step (one token read), not a prompt chunk
	draft  int  // the most tokens the draft may propose (decode steps with a draft)
}

// scheduler runs continuous batching over a paged KV cache: one goroutine owns the
// backend and steps every running sequence together (a decode token each, plus prompt
// chunks within the token budget); requests join and leave between steps. Sequences
// hold KV blocks from one pool through their block tables; when a step cannot get the
// blocks it needs, the most recently admitted sequence is preempted: its blocks go
// back to the pool and it returns to the head of the queue, to recompute its tokens
// when readmitted.
type scheduler struct {
	e      *Engine
	submit chan *seq // unbuffered: a send succeeds only when the loop holds the request
	quit   chan struct{}
	done   chan struct{}
	start  sync.Once
	stop   sync.Once

	reset chan chan struct{} // ResetPrefixCache: drop the free cached blocks, then close
	sync  chan chan struct{} // Settle: close between two steps

	nRunning, nWaiting, nUsed atomic.Int64
	nQuery, nHit, nPreempt    atomic.Int64
	nDrafted, nAccepted       atomic.Int64
	nSteps, nTokens           atomic.Int64
	nRolled                   atomic.Int64
	stepMu                    sync.Mutex
	steps                     StepTimes // decode step durations, under stepMu

	// Owned by the loop goroutine.
	queue  []*seq // waiting, first come first served (preempted ones at the head)
	active []*seq // holding KV blocks, in admission order
	cache  *model.Cache
	pool   *blockPool
	state  *model.State
	plan   []planned
	batch  []model.Seq
	// The draft model's (speculative decoding): a cache of the same blocks, its
	// activations, its batch, the plan entries still drafting, the model's
	// distribution while verifying.
	dcache   *model.Cache
	dstate   *model.State
	dbatch   []model.Seq
	drafting []int
	pbuf     []float32
	evs      []event // a speculative step's tokens, handed over together

	beforeStep func() // tests only: called by the loop before each step
	afterStep  func() // tests only: called by the loop after each step
}

func newScheduler(e *Engine) *scheduler {
	return &scheduler{e: e, submit: make(chan *seq), reset: make(chan chan struct{}), sync: make(chan chan struct{}), quit: make(chan struct{}), done: make(chan struct{})}
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
	o, kv := s.e.opts, s.e.kv
	s.state = s.e.Model.NewState(o.MaxNumBatchedTokens)
	s.state.Flash = o.FlashAttn
	s.state.Window = o.Window
	s.e.part.apply(s.state)
	var err error
	if s.cache, err = s.e.Model.NewPagedCache(kv.Blocks, kv.BlockSize, kv.Type); err != nil {
		err = fmt.Errorf("engine: KV cache: %w", err)
	}
	if d := s.e.draft; d != nil && err == nil {
		// A catch-up pass reads the step's tokens plus at most one more per sequence.
		s.dstate = d.Model.NewState(o.MaxNumBatchedTokens + o.MaxNumSeqs)
		s.dstate.Flash = o.FlashAttn
		if s.dcache, err = d.Model.NewPagedCache(kv.Blocks, kv.BlockSize, kv.Type); err != nil {
			err = fmt.Errorf("engine: draft KV cache: %w", err)
		}
	}
	s.pool = newBlockPool(kv.Blocks, kv.BlockSize, kv.PrefixCache)
	clock := s.e.opts.Clock.Now
	for {
		if len(s.active) == 0 && len(s.queue) == 0 {
			s.publish()
			select {
			case q := <-s.submit:
				s.queue = append(s.queue, q)
			case done := <-s.reset:
				s.pool.dropCached()
				close(done)
				continue
			case done := <-s.sync:
				close(done)
				continue
			case <-s.quit:
				return
			}
		}
		t0 := clock()
	intake:
		for {
			select {
			case q := <-s.submit:
				s.queue = append(s.queue, q)
			case done := <-s.reset:
				s.pool.dropCached()
				close(done)
			case done := <-s.sync:
				close(done)
			case <-s.quit:
				s.failAll(ErrClosed)
				return
			default:
				break intake
			}
		}
		if err != nil {
			s.failAll(err)
			continue
		}
		s.reap()
		s.schedule()
		s.publish()
		if len(s.plan) > 0 {
			if s.beforeStep != nil {
				s.beforeStep()
			}
			if s.step() {
				d := clock().Sub(t0)
				s.stepMu.Lock()
				s.steps.add(d)
				s.stepMu.Unlock()
			}
			if s.afterStep != nil {
				s.afterStep()
			}
		}
	}
}

func (s *scheduler) publish() {
	s.nRunning.Store(int64(len(s.active)))
	s.nWaiting.Store(int64(len(s.queue)))
	if s.pool != nil {
		s.nUsed.Store(int64(s.pool.used()))
	}
}

// reap drops the requests whose callers have gone (cancelled, or returned after an
// error from emit), returning their KV blocks at once.
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

// release returns q's KV blocks to the pool (those that hold a cached prefix stay
// findable until their space is needed) and forgets what its cache held.
func (s *scheduler) release(q *seq) {
	s.pool.free(q.blocks)
	q.blocks, q.pos, q.nReg, q.dpos = q.blocks[:0], 0, 0, 0
}

// grow extends q's block table to cover end positions, if the pool has the blocks,
// after giving back those a rolling window no longer reads (slide).
func (s *scheduler) grow(q *seq, end int) bool {
	s.slide(q)
	need := (end+s.pool.size-1)/s.pool.size - len(q.blocks)
	if need > s.pool.nFree {
		return false
	}
	if need > 0 {
		q.blocks = s.pool.alloc(q.blocks, need)
	}
	return true
}

// slide gives back, under a rolling window (Options.Window), the blocks of q that hold
// only positions before the window of its next token (q.pos): their table entries
// become -1 and the pool hands them out again (the ring), while a block that holds a
// cached prefix stays findable and is never overwritten.
func (s *scheduler) slide(q *seq) {
	w := s.e.opts.Window
	if w <= 0 {
		return
	}
	first := min(max(0, q.pos+1-w)/s.pool.size, len(q.blocks))
	for i := range q.blocks[:first] {
		if b := q.blocks[i]; b >= 0 {
			s.pool.free(q.blocks[i : i+1])
			q.blocks[i] = -1
			if !q.rolled {
				q.rolled = true
				s.nRolled.Add(1)
			}
		}
	}
}

// fit bounds a chunk of n tokens of q from q.pos so that, under a rolling window, the
// positions it reads and writes lie in the WindowBlocks blocks q may hold: a decode
// token always fits, a prompt chunk past the window is cut to the free part of the
// ring.
func (s *scheduler) fit(q *seq, n int) int {
	w := s.e.opts.Window
	if w <= 0 {
		return n
	}
	first := max(0, q.pos+1-w) / s.pool.size
	return max(1, min(n, (first+WindowBlocks(w, s.pool.size))*s.pool.size-q.pos))
}

// preempt sends the most recently admitted running sequence back to the head of the
// queue, freeing its blocks and dropping its share of the step being planned, and
// returns it.
func (s *scheduler) preempt(budget *int) *seq {
	n := len(s.active) - 1
	v := s.active[n]
	s.active[n] = nil
	s.active = s.active[:n]
	for i, p := range s.plan {
		if p.q == v {
			*budget += p.n
			s.plan = append(s.plan[:i], s.plan[i+1:]...)
			break
		}
	}
	s.release(v)
	s.queue = append(s.queue, nil)
	copy(s.queue[1:], s.queue)
	s.queue[0] = v
	s.nPreempt.Add(1)
	return v
}

// schedule plans the next step within the token budget: first a decode token for
// every running sequence past its prompt, then chunks of the running sequences still
// reading, in admission order, preempting the most recent ones when the pool runs out
// of blocks; then, when nothing was preempted, it admits waiting requests, oldest
// first, while blocks and budget last.
func (s *scheduler) schedule() {
	budget := s.e.opts.MaxNumBatchedTokens
	s.plan = s.plan[:0]
	preempted := false
	decoding := 0 // decoding sequences not yet planned, each owed one token of the budget
	if s.e.draft != nil {
		for _, q := range s.active {
			if q.remaining() == 1 {
				decoding++
			}
		}
	}
	for _, decode := range []bool{true, false} {
		for i := 0; i < len(s.active) && budget > 0; i++ {
			q := s.active[i]
			if (q.remaining() == 1) != decode {
				continue
			}
			n, k := s.fit(q, min(q.remaining(), budget)), 0
			if decode && s.e.draft != nil {
				decoding--
				k = max(0, min(s.draftRoom(q), budget-1-decoding))
				n = 1 + k
			}
			for !s.grow(q, q.pos+n) {
				if k > 0 { // try without proposals before preempting anyone
					n, k = 1, 0
					continue
				}
				preempted = true
				if s.preempt(&budget) == q {
					break
				}
			}
			if i < len(s.active) && s.active[i] == q {
				s.plan = append(s.plan, planned{q: q, n: n, decode: decode, draft: k})
				budget -= n
			}
		}
	}
	if preempted {
		return
	}
	for len(s.queue) > 0 && len(s.active) < s.e.opts.MaxNumSeqs && budget > 0 {
		q := s.queue[0]
		hits := s.lookup(q)
		n := s.fit(q, min(q.remaining(), budget))
		if !s.grow(q, q.pos+n) {
			s.release(q) // hand back the cached blocks it took; it waits at the head
			break
		}
		if !q.queried && s.pool.prefix {
			q.queried = true
			s.nQuery.Add(int64(q.nPrompt))
			s.nHit.Add(int64(min(hits, q.nPrompt)))
		}
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.active = append(s.active, q)
		s.plan = append(s.plan, planned{q: q, n: n})
		budget -= n
	}
}

// lookup gives q the cached blocks that hold the longest prefix of its tokens, at
// most all but the last token (whose logits must be computed), and returns how many
// tokens they hold.
func (s *scheduler) lookup(q *seq) int {
	p := s.pool
	if !p.prefix {
		return 0
	}
	for i := 0; (i+1)*p.size < len(q.toks); i++ {
		var parent uint64
		if i > 0 {
			parent = q.keys[i-1]
		}
		b, ok := p.lookup(q.key(i, p.size), parent, q.toks[i*p.size:(i+1)*p.size])
		if !ok {
			break
		}
		p.take(b)
		q.blocks = append(q.blocks, b)
	}
	q.nReg = len(q.blocks)
	q.pos = len(q.blocks) * p.size
	q.dpos = q.pos // a registered block holds the draft's keys and values too
	return q.pos
}

// step runs the planned forward pass, samples a token for every sequence whose
// tokens are all read, hands each to its request stamped with the clock (the time it
// was emitted), and enters newly filled blocks into the prefix cache. With a draft
// model, the draft first proposes tokens for the decoding sequences (propose) and the
// pass verifies them (accept). It reports whether a sequence that had already
// generated a token got its next one (a decode step).
func (s *scheduler) step() (decoded bool) {
	defer func() { clear(s.batch); clear(s.plan) }() // keep no request reachable between steps
	var err error
	if s.e.draft != nil {
		err = s.propose()
	}
	s.batch = s.batch[:0]
	for _, p := range s.plan {
		q := p.q
		if len(q.props) > 0 {
			q.verify = append(append(q.verify[:0], q.toks[q.pos]), q.props...)
			s.batch = append(s.batch, model.Seq{Cache: s.cache, Start: q.pos, Tokens: q.verify, Blocks: q.blocks, Logits: true, AllLogits: true})
			continue
		}
		s.batch = append(s.batch, model.Seq{Cache: s.cache, Start: q.pos, Tokens: q.toks[q.pos : q.pos+p.n],
			Blocks: q.blocks, Logits: q.pos+p.n == len(q.toks)})
	}
	var logits []float32
	if err == nil {
		s.e.mu.Lock()
		logits, err = s.e.Model.ForwardBatch(s.e.be, s.state, s.batch)
		s.e.mu.Unlock()
	}
	if err != nil {
		for _, p := range s.plan {
			p.q.out.push(event{err: err})
			s.finish(p.q)
		}
		s.active = deleteFunc(s.active, func(q *seq) bool { return q.blocks == nil })
		return false
	}
	vocab := s.e.Model.Vocab
	row, finished := 0, false
	for i, p := range s.plan {
		q := p.q
		if k := len(q.props); k > 0 {
			decoded = true
			if s.accept(q, logits[row*vocab:(row+k+1)*vocab]) {
				finished = true
			}
			row += k + 1
			continue
		}
		q.pos += p.n // now in the cache
		s.register(q)
		if !s.batch[i].Logits {
			continue // more of the prompt to read
		}
		l := logits[row*vocab : (row+1)*vocab]
		row++
		if p.n == 1 && len(q.toks) > q.nPrompt {
			decoded = true
		}
		q.steps++
		s.nSteps.Add(1)
		s.nTokens.Add(1)
		ev := s.next(q, q.smp.Sample(l, q.toks), l, time.Time{})
		q.out.push(ev)
		if ev.stop != "" {
			s.finish(q)
			finished = true
		}
	}
	if finished {
		s.active = deleteFunc(s.active, func(q *seq) bool { return q.blocks == nil })
	}
	return decoded
}

// next appends token id, sampled from logits l, to q and returns its event for q's
// request, stamped at, or with the clock when at is zero (emitted now: the request's
// consumer may take it later); its stop is set when the token ends the request (end
// of generation, max_tokens or context).
func (s *scheduler) next(q *seq, id int32, l []float32, at time.Time) event {
	q.toks = append(q.toks, id)
	gen := len(q.toks) - q.nPrompt
	ev := event{id: id, at: at, steps: q.steps, drafted: q.drafted, accepted: q.accepted}
	if q.req.Logprobs {
		ev.logprob, ev.top = sample.Logprobs(l, id, q.req.TopLogprobs)
	}
	switch {
	case s.e.Tok.IsEOG(id) && !q.req.IgnoreEOS:
		ev.stop = "eos"
	case q.req.MaxTokens > 0 && gen >= q.req.MaxTokens:
		ev.stop = "length"
	case len(q.toks) >= s.e.opts.SeqContext: // prompt + generated tokens fill the context
		ev.stop = "context"
	}
	if ev.at.IsZero() {
		ev.at = s.e.opts.Clock.Now()
	}
	return ev
}

// finish releases a sequence that has ended; the scheduler drops it from the running
// set after the step (its nil block table marks it).
func (s *scheduler) finish(q *seq) {
	s.release(q)
	q.blocks = nil
}

// register enters the blocks q has filled into the prefix cache (with a draft, those
// both caches have filled).
func (s *scheduler) register(q *seq) {
	p := s.pool
	if !p.prefix {
		return
	}
	end := q.pos
	if s.e.draft != nil {
		end = min(end, q.dpos)
	}
	for ; (q.nReg+1)*p.size <= end; q.nReg++ {
		i := q.nReg
		if q.blocks[i] < 0 {
			continue // given back by the rolling window
		}
		var parent uint64
		if i > 0 {
			parent = q.key(i-1, p.size)
		}
		p.register(q.blocks[i], q.key(i, p.size), parent, q.toks[i*p.size:(i+1)*p.size])
	}
}

// failAll ends every request the loop holds with err.
func (s *scheduler) failAll(err error) {
	for _, q := range s.active {
		q.out.push(event{err: err})
		if s.pool != nil {
			s.release(q)
		}
	}
	for _, q := range s.queue {
		q.out.push(event{err: err})
	}
	s.active, s.queue = nil, nil
	s.publish()
}
