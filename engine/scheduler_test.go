package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/engine/builtin"
	"llmbench/engine/sample"
	"llmbench/engine/synth"
)

// soloGreedy decodes n greedy tokens after prompt on a Session of its own (the
// one-sequence path, no scheduler) and returns them with the gap between the top two
// logits at each step.
func soloGreedy(t *testing.T, e *Engine, prompt []int32, n int) ([]int32, []float32) {
	t.Helper()
	s, err := e.NewSession(len(prompt) + n)
	if err != nil {
		t.Fatal(err)
	}
	smp := sample.New(sample.Params{})
	logits, err := s.Eval(prompt)
	if err != nil {
		t.Fatal(err)
	}
	var toks []int32
	var gaps []float32
	for i := range n {
		id := smp.Sample(logits, nil)
		toks = append(toks, id)
		gaps = append(gaps, topGap(logits))
		if i == n-1 {
			break
		}
		if logits, err = s.Eval([]int32{id}); err != nil {
			t.Fatal(err)
		}
	}
	return toks, gaps
}

// topGap returns the difference between the largest and second-largest logit.
func topGap(l []float32) float32 {
	a, b := l[0], l[1]
	if b > a {
		a, b = b, a
	}
	for _, v := range l[2:] {
		if v > a {
			a, b = v, a
		} else if v > b {
			b = v
		}
	}
	return a - b
}

// testPrompts returns n prompts of 1 to 40 tokens drawn from the vocabulary (past the
// special tokens), the same for a seed.
func testPrompts(e *Engine, n int, seed uint64) [][]int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([][]int32, n)
	for i := range out {
		p := make([]int32, 1+r.IntN(40))
		for j := range p {
			p[j] = int32(3 + r.IntN(e.Tok.VocabSize()-3))
		}
		out[i] = p
	}
	return out
}

// TestBatchingKeepsGreedyAnswers runs 32 greedy requests at once, with prompts chunked
// and mixed with decode steps, and checks each gets the tokens it gets alone. A
// difference is allowed only where, at the first step that differs, the solo run's
// top two logits are within 1e-4 (batched matmuls may sum in another order than
// single-token ones); such cases are logged.
// The partitions cases run every row partitioned (partitions of 16 positions, so rows
// past 16 have several) and the automatic choice with its crossover forced to 24
// positions (rows on both paths within one sequence, sequences on different paths in
// one step): the choice depends on a row's own context only, so batching must not
// change answers on either path.
//
// The qwen3moe case groups each step's tokens by expert (qwen3moeMini, 8 experts, 2 per
// token): a sequence's answers must not depend on which other tokens shared its
// experts' matrix products. The gpt-oss case adds sinks and the window of its even
// blocks to the shared paged cache's varlen attention.
func TestBatchingKeepsGreedyAnswers(t *testing.T) {
	moe := writeSynth(t, "Q8_0", 5, qwen3moeMini)
	oss := writeSynth(t, "Q8_0", 5, gptossMini)
	tiny := ""
	if !testing.Short() {
		p, err := synth.Ensure(context.Background(), t.TempDir(), "llama-tiny", "Q4_0", 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		tiny = p
	}
	cases := []struct {
		name, path  string
		seqs, batch int
		gen         int
		part        Options // the partition options
		long        bool    // skipped in -short mode (the crossover case covers both paths)
	}{
		{"stories260K/16x512", "", 16, 512, 32, Options{}, false},
		{"stories260K/8x24", "", 8, 24, 32, Options{}, false},
		{"stories260K/8x24/partitions-on", "", 8, 24, 32, Options{Partitions: PartitionsOn, PartitionSize: 16}, true},
		{"stories260K/16x64/partitions-from-24", "", 16, 64, 32, Options{PartitionFrom: 24, PartitionSize: 16}, false},
		{"llama-tiny-Q4_0/16x64", tiny, 16, 64, 12, Options{}, false},
		{"qwen3moe-mini-Q8_0/16x64", moe, 16, 64, 32, Options{}, false},
		{"gpt-oss-mini-Q8_0/16x64", oss, 16, 64, 32, Options{}, false},
		{"llama-tiny-Q4_0/16x64/partitions-from-24", tiny, 16, 64, 12, Options{PartitionFrom: 24, PartitionSize: 16}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("covered by the crossover case in -short mode")
			}
			opts := Options{Threads: 2, MaxNumSeqs: c.seqs, MaxNumBatchedTokens: c.batch,
				Partitions: c.part.Partitions, PartitionFrom: c.part.PartitionFrom, PartitionSize: c.part.PartitionSize}
			if c.part == (Options{}) {
				opts.Partitions = PartitionsOff // the one-pass path alone (auto is covered above)
			}
			var e *Engine
			var err error
			switch {
			case c.path != "":
				e, err = Load(context.Background(), c.path, opts)
			case c.name[:6] == "llama-":
				t.Skip("synthetic model skipped in -short mode")
			default:
				e, err = LoadBytes(context.Background(), "builtin", builtin.Stories260K, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			prompts := testPrompts(e, 32, 7)
			checkGreedy(t, e, prompts, runAll(t, e, prompts, c.gen), c.gen)
		})
	}
}

// runAll runs greedy requests for every prompt at once, gen tokens each, and returns
// the tokens each got.
func runAll(t *testing.T, e *Engine, prompts [][]int32, gen int) [][]int32 {
	t.Helper()
	got := make([][]int32, len(prompts))
	errs := make([]error, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() {
			_, errs[i] = e.Generate(context.Background(), Request{Tokens: p, MaxTokens: gen, IgnoreEOS: true}, func(tk Token) error {
				if tk.ID >= 0 {
					got[i] = append(got[i], tk.ID)
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return got
}

// checkGreedy compares the tokens each prompt got with those of a solo run. A
// difference is allowed only where, at the first step that differs, the solo run's
// top two logits are within 1e-4 (logged). kernels/cpu keeps one reduction order per
// output element whatever the batch size, so batched and solo logits are bit-identical
// and even that allowance is not expected to be used.
func checkGreedy(t *testing.T, e *Engine, prompts, got [][]int32, gen int) {
	t.Helper()
	near, far := 0, 0
	for i, p := range prompts {
		want, gaps := soloGreedy(t, e, p, gen)
		if len(got[i]) != len(want) {
			t.Fatalf("request %d: %d tokens, want %d", i, len(got[i]), len(want))
		}
		for k := range want {
			if got[i][k] == want[k] {
				continue
			}
			if gaps[k] >= 1e-4 {
				far++
				t.Logf("request %d differs at token %d: batched %d, alone %d (top-two gap %g)", i, k, got[i][k], want[k], gaps[k])
			} else {
				near++
				t.Logf("request %d differs at token %d where the top two logits are %g apart (allowed)", i, k, gaps[k])
			}
			break
		}
	}
	t.Logf("%d of %d requests differ from their solo run at a near-tie (top two logits < 1e-4 apart), %d beyond one", near, len(prompts), far)
	if far > 0 {
		t.Errorf("%d requests differ from their solo run where the top two logits are ≥ 1e-4 apart", far)
	}
}

// sharedPrompts returns n prompts made of one of k random prefixes of prefixLen
// tokens and a random suffix of 1 to 20 tokens.
func sharedPrompts(e *Engine, n, k, prefixLen int, seed uint64) [][]int32 {
	prefixes := testPrompts(e, k, seed)
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([][]int32, n)
	for i := range out {
		pre := prefixes[i%k]
		for len(pre) < prefixLen {
			pre = append(pre, pre...)
		}
		p := append([]int32(nil), pre[:prefixLen]...)
		for range 1 + r.IntN(20) {
			p = append(p, int32(3+r.IntN(e.Tok.VocabSize()-3)))
		}
		out[i] = p
	}
	return out
}

// poolFor returns the KV cache memory, in bytes, of tokens positions of e's model.
func poolFor(e *Engine, tokens int) int64 {
	return int64(tokens) * e.Model.KVBytesPerToken(e.opts.KVType)
}

// checkPool verifies, on the scheduler's goroutine, that every block's reference
// count is the number of running block tables holding it, that running sequences hold
// blocks for their cached positions and that the pool's free count adds up.
func checkPool(t *testing.T, s *scheduler) {
	p := s.pool
	refs := make([]int32, p.total())
	for _, q := range s.active {
		if len(q.blocks)*p.size < q.pos {
			t.Errorf("a sequence holds %d blocks for %d positions", len(q.blocks), q.pos)
		}
		held := 0
		for _, b := range q.blocks {
			if b < 0 {
				continue // given back by the rolling window
			}
			refs[b]++
			held++
		}
		if w := s.e.opts.Window; w > 0 && held > WindowBlocks(w, p.size) {
			t.Errorf("a sequence holds %d blocks under a rolling window of %d blocks", held, WindowBlocks(w, p.size))
		}
	}
	free := 0
	for b, r := range refs {
		if r != p.ref[b] {
			t.Errorf("block %d: %d references, held by %d tables", b, p.ref[b], r)
		}
		if r == 0 {
			free++
		}
	}
	if free != p.nFree {
		t.Errorf("%d blocks free, the pool counts %d", free, p.nFree)
	}
	for _, q := range s.queue {
		if len(q.blocks) != 0 {
			t.Errorf("a waiting sequence holds %d blocks", len(q.blocks))
		}
	}
}

// TestPagingKeepsGreedyAnswers runs concurrent greedy requests where the KV pool runs
// out (so sequences are preempted and recompute their tokens) and where prompts share
// prefixes (so blocks are shared), and checks each request gets its solo answer. On
// stories260K, whose matmuls take one kernel for any batch, answers must be identical.
func TestPagingKeepsGreedyAnswers(t *testing.T) {
	cases := []struct {
		name          string
		prefix        bool
		poolTokens    int // 0: the default pool
		shared        bool
		wantPreempted bool
		long          bool // skipped in -short mode (make test runs it under -race)
	}{
		{"preemption", true, 3 * 80, false, true, false},
		{"preemption/no-prefix-cache", false, 3 * 80, false, true, true},
		{"prefix-sharing", true, 0, true, false, true},
		{"prefix-sharing+preemption", true, 4 * 80, true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("covered by the other cases in -short mode")
			}
			e := builtinEngine(t, Options{MaxNumSeqs: 16, MaxNumBatchedTokens: 64, BlockSize: 8, NoPrefixCache: !c.prefix})
			if c.poolTokens > 0 {
				e.Close()
				e = builtinEngine(t, Options{MaxNumSeqs: 16, MaxNumBatchedTokens: 64, BlockSize: 8, NoPrefixCache: !c.prefix, KVCacheMemory: poolFor(e, c.poolTokens)})
			}
			e.sched.beforeStep = func() { checkPool(t, e.sched) }
			prompts := testPrompts(e, 32, 7)
			if c.shared {
				prompts = sharedPrompts(e, 32, 4, 37, 9)
			}
			got := runAll(t, e, prompts, 32)
			st := e.SchedulerStats()
			t.Logf("pool %d blocks of %d; %d preemptions; prefix cache %d of %d prompt tokens", e.KVCache().Blocks, e.KVCache().BlockSize, st.Preemptions, st.PrefixHitTokens, st.PrefixQueryTokens)
			if (st.Preemptions > 0) != c.wantPreempted {
				t.Errorf("%d preemptions; want some: %v", st.Preemptions, c.wantPreempted)
			}
			if c.shared && st.PrefixHitTokens == 0 {
				t.Error("no prompt token was found in the prefix cache")
			}
			if !c.prefix && st.PrefixQueryTokens != 0 {
				t.Errorf("prefix cache off but %d tokens looked up", st.PrefixQueryTokens)
			}
			checkGreedy(t, e, prompts, got, 32)
			waitFor(t, "an idle scheduler", func() bool {
				st := e.SchedulerStats()
				return st.Running == 0 && st.Waiting == 0 && st.KVBlocksUsed == 0
			})
		})
	}
}

// TestPrefixCacheKeepsAnswers checks that requests sharing prefixes get the same
// tokens with and without the prefix cache, and that the cache found the prefixes.
func TestPrefixCacheKeepsAnswers(t *testing.T) {
	var outs [2][][]int32
	for i, off := range []bool{false, true} {
		e := builtinEngine(t, Options{MaxNumSeqs: 8, NoPrefixCache: off})
		prompts := sharedPrompts(e, 24, 3, 50, 4)
		// The first request of each prefix runs first, so that the others can find it.
		outs[i] = append(runAll(t, e, prompts[:3], 24), runAll(t, e, prompts[3:], 24)...)
		st := e.SchedulerStats()
		t.Logf("prefix cache off=%v: %d of %d prompt tokens hit", off, st.PrefixHitTokens, st.PrefixQueryTokens)
		if !off && st.PrefixHitTokens < int64(len(prompts)-3)*48 {
			t.Errorf("%d prompt tokens found in the prefix cache, want at least %d (all but the first request of each prefix)", st.PrefixHitTokens, (len(prompts)-3)*48)
		}
	}
	for i := range outs[0] {
		if !slices.Equal(outs[0][i], outs[1][i]) {
			t.Errorf("request %d: %v with the prefix cache, %v without", i, outs[0][i], outs[1][i])
		}
	}
}

// TestWholePromptCached repeats a prompt of whole blocks: every block but the last
// is found in the cache (the last token's logits must be computed, so its block is
// read again) and the answer does not change.
func TestWholePromptCached(t *testing.T) {
	e := builtinEngine(t, Options{BlockSize: 16})
	p := sharedPrompts(e, 1, 1, 48, 5)[0][:48]
	first := runAll(t, e, [][]int32{p}, 12)[0]
	for i := range 2 {
		got := runAll(t, e, [][]int32{p}, 12)[0]
		if !slices.Equal(got, first) {
			t.Errorf("repeat %d: %v, first run %v", i, got, first)
		}
	}
	if st := e.SchedulerStats(); st.PrefixQueryTokens != 3*48 || st.PrefixHitTokens != 2*32 {
		t.Errorf("prefix cache: %d of %d prompt tokens hit, want 64 of 144", st.PrefixHitTokens, st.PrefixQueryTokens)
	}
}

// TestPoolNeverOverCommits runs 64 concurrent requests against a pool sized for 8
// sequences: every request completes (sequences are preempted and recompute, nobody
// gets an error), the pool's books balance before every step, and all blocks come
// back at the end.
func TestPoolNeverOverCommits(t *testing.T) {
	const seqCtx = 128
	probe := builtinEngine(t, Options{})
	e := builtinEngine(t, Options{MaxNumSeqs: 64, MaxNumBatchedTokens: 256, SeqContext: seqCtx, KVCacheMemory: poolFor(probe, 8*seqCtx)})
	if e.KVCache().Tokens() != 8*seqCtx {
		t.Fatalf("pool of %d tokens, want %d", e.KVCache().Tokens(), 8*seqCtx)
	}
	steps, maxUsed := 0, 0
	e.sched.beforeStep = func() {
		checkPool(t, e.sched)
		steps++
		maxUsed = max(maxUsed, e.sched.pool.used())
	}
	r := rand.New(rand.NewPCG(3, 4))
	prompts := testPrompts(e, 64, 11)
	gens := make([]int, len(prompts))
	var wg sync.WaitGroup
	errs := make([]error, len(prompts))
	stats := make([]Stats, len(prompts))
	for i := range prompts {
		gens[i] = 40 + r.IntN(seqCtx-40-len(prompts[i]))
		wg.Go(func() {
			stats[i], errs[i] = e.Generate(context.Background(), Request{Tokens: prompts[i], MaxTokens: gens[i], IgnoreEOS: true}, func(Token) error { return nil })
		})
	}
	wg.Wait()
	for i := range prompts {
		if errs[i] != nil || stats[i].GenTokens != gens[i] || stats[i].StopReason != "length" {
			t.Errorf("request %d: %+v, %v; want %d tokens", i, stats[i], errs[i], gens[i])
		}
	}
	st := e.SchedulerStats()
	t.Logf("%d steps, %d preemptions, at most %d of %d blocks in use", steps, st.Preemptions, maxUsed, st.KVBlocksTotal)
	if st.Preemptions == 0 {
		t.Error("no preemption: the test does not exercise a full pool")
	}
	waitFor(t, "all blocks back", func() bool { st := e.SchedulerStats(); return st.Running == 0 && st.KVBlocksUsed == 0 })
}

// TestPromptLongerThanPool checks that a prompt the whole pool cannot hold gets a
// clear error at submission.
func TestPromptLongerThanPool(t *testing.T) {
	probe := builtinEngine(t, Options{})
	e := builtinEngine(t, Options{KVCacheMemory: poolFor(probe, 64), BlockSize: 16})
	_, err := e.Generate(context.Background(), Request{Tokens: make([]int32, 70)}, func(Token) error { return nil })
	if !errors.Is(err, ErrContextFull) || !strings.Contains(err.Error(), "KV cache pool of 64 tokens") {
		t.Errorf("got %v, want an error naming the pool", err)
	}
	if _, err := Load(context.Background(), "../testdata/models/tinystories-656k-q8_0.gguf", Options{KVCacheMemory: 100}); err == nil || !strings.Contains(err.Error(), "holds no block") {
		t.Errorf("a pool smaller than a block: %v", err)
	}
}

func builtinEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	if opts.Threads == 0 {
		opts.Threads = 2
	}
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// gateSteps makes e's scheduler wait before each step for a value on the returned
// channel (or for the channel to be closed, which lets it run freely).
func gateSteps(e *Engine) chan struct{} {
	gate := make(chan struct{})
	s := e.sched
	s.beforeStep = func() {
		select {
		case <-gate:
		case <-s.quit:
		}
	}
	return gate
}

// TestSchedulerQueuesAndCancels fills both sequence slots, checks a third request
// waits, then cancels a running one and checks its place goes to the waiting one at
// once.
func TestSchedulerQueuesAndCancels(t *testing.T) {
	e := builtinEngine(t, Options{MaxNumSeqs: 2})
	if st := e.SchedulerStats(); st.KVBlocksTotal != e.KVCache().Blocks || st.KVBlocksUsed != 0 || st.Running != 0 {
		t.Fatalf("idle stats %+v", st)
	}
	gate := gateSteps(e)
	ctx0, cancel0 := context.WithCancel(context.Background())
	defer cancel0()
	type result struct {
		st  Stats
		err error
	}
	res := make([]chan result, 3)
	for i := range res {
		res[i] = make(chan result, 1)
		ctx := context.Background()
		if i == 0 {
			ctx = ctx0
		}
		go func() {
			st, err := e.Generate(ctx, Request{Prompt: "Once upon a time", MaxTokens: 20, IgnoreEOS: true}, func(Token) error { return nil })
			res[i] <- result{st, err}
		}()
		waitFor(t, "the request to reach the scheduler", func() bool {
			select {
			case gate <- struct{}{}: // let a step run, so the loop takes in new requests
			default:
			}
			st := e.SchedulerStats()
			return st.Running+st.Waiting == i+1
		})
	}
	if st := e.SchedulerStats(); st.Running != 2 || st.Waiting != 1 || st.KVBlocksUsed < 2 {
		t.Fatalf("stats %+v, want 2 running and 1 waiting", st)
	}
	cancel0()
	r := <-res[0]
	if !errors.Is(r.err, context.Canceled) || r.st.StopReason != "cancelled" {
		t.Errorf("cancelled request: %+v, %v", r.st, r.err)
	}
	gate <- struct{}{} // the next step runs without request 0 and with request 2
	waitFor(t, "request 2 to take the freed slot", func() bool {
		st := e.SchedulerStats()
		return st.Running == 2 && st.Waiting == 0
	})
	close(gate)
	for i := 1; i < 3; i++ {
		r := <-res[i]
		if r.err != nil || r.st.GenTokens != 20 || r.st.StopReason != "length" {
			t.Errorf("request %d: %+v, %v", i, r.st, r.err)
		}
	}
	waitFor(t, "an idle scheduler", func() bool { st := e.SchedulerStats(); return st.Running == 0 && st.Waiting == 0 })
}

// TestSchedulerManyRequests runs more requests than slots, with mixed endings: emit
// errors, cancellations, the context limit, EOS and length, all at once.
// It runs with the default pool and with a pool of two full contexts, where
// sequences are preempted while others are cancelled or fail, and the pool's books
// are checked before every step.
func TestSchedulerManyRequests(t *testing.T) {
	for _, contexts := range []int{0, 2} {
		t.Run(fmt.Sprintf("pool=%d contexts", contexts), func(t *testing.T) { manyRequests(t, contexts) })
	}
}

func manyRequests(t *testing.T, contexts int) {
	// tinystories-656k ends "Once upon a time" with EOS after 92 greedy tokens.
	const path = "../testdata/models/tinystories-656k-q8_0.gguf"
	opts := Options{Threads: 2, MaxNumSeqs: 4, MaxNumBatchedTokens: 16, Context: 128}
	e, err := Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if contexts > 0 {
		opts.KVCacheMemory = poolFor(e, contexts*128)
		e.Close()
		if e, err = Load(context.Background(), path, opts); err != nil {
			t.Fatal(err)
		}
		e.sched.beforeStep = func() { checkPool(t, e.sched) }
	}
	defer e.Close()
	const eosPrompt = "Once upon a time"
	solo, err := e.Generate(context.Background(), Request{Prompt: eosPrompt}, func(Token) error { return nil })
	if err != nil || solo.StopReason != "eos" {
		t.Fatalf("solo run of %q: %+v, %v; want an EOS stop", eosPrompt, solo, err)
	}
	eosAt := solo.GenTokens - 1
	boom := errors.New("boom")
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := map[string]int{}
	for i := range 40 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := Request{Prompt: fmt.Sprintf("Once upon a time %d", i), MaxTokens: 5 + i%7, IgnoreEOS: true}
			kind := i % 5
			switch kind {
			case 1:
				req.MaxTokens = 0 // until the context is full
			case 4:
				req = Request{Prompt: eosPrompt}
			}
			n := 0
			st, err := e.Generate(ctx, req, func(tk Token) error {
				n++
				switch {
				case kind == 2 && tk.Index == 2:
					return boom
				case kind == 3 && tk.Index == 1:
					cancel()
				}
				return nil
			})
			var bad string
			switch kind {
			case 0:
				if err != nil || st.StopReason != "length" || st.GenTokens != req.MaxTokens {
					bad = "length"
				}
			case 1:
				if err != nil || st.StopReason != "context" || st.PromptTokens+st.GenTokens != 128 {
					bad = "context"
				}
			case 2:
				if !errors.Is(err, boom) || st.GenTokens != 3 {
					bad = "emit error"
				}
			case 3:
				if !errors.Is(err, context.Canceled) || st.StopReason != "cancelled" || st.GenTokens != 2 {
					bad = "cancel"
				}
			case 4:
				if err != nil || st.StopReason != "eos" || st.GenTokens != eosAt+1 {
					bad = "eos"
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if bad != "" {
				t.Errorf("request %d (%s): %+v, %v", i, bad, st, err)
			}
			count[st.StopReason]++
		})
	}
	wg.Wait()
	t.Logf("stop reasons: %v; %d preemptions", count, e.SchedulerStats().Preemptions)
	waitFor(t, "an idle scheduler", func() bool { st := e.SchedulerStats(); return st.Running == 0 && st.Waiting == 0 })
}

// TestSchedulerTimings checks the stats of a request: the prompt time runs to the first
// token and the generation time from it to the last.
func TestSchedulerTimings(t *testing.T) {
	e := builtinEngine(t, Options{})
	start := time.Now()
	st, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", MaxTokens: 8, IgnoreEOS: true}, func(Token) error { return nil })
	total := time.Since(start)
	if err != nil || st.GenTokens != 8 || st.PromptTime <= 0 || st.GenTime <= 0 || st.PromptTime+st.GenTime > total {
		t.Errorf("stats %+v (total %v), %v", st, total, err)
	}
}

// TestCloseFailsRequests checks that closing the engine ends what it holds and refuses
// new requests.
func TestCloseFailsRequests(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	gate := gateSteps(e)
	got := make(chan error, 1)
	go func() {
		_, err := e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: 100, IgnoreEOS: true}, func(Token) error { return nil })
		got <- err
	}()
	gate <- struct{}{} // the loop holds the request
	gate <- struct{}{}
	e.Close()
	if err := <-got; !errors.Is(err, ErrClosed) {
		t.Errorf("running request: %v, want ErrClosed", err)
	}
	if _, err := e.Generate(context.Background(), Request{Prompt: "Once"}, func(Token) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// slowClock takes 20 ms to read, as a descheduled scheduler goroutine would: a step's
// last token reaches its caller well before the step is timed and counted.
type slowClock struct{}

func (slowClock) Now() time.Time { time.Sleep(20 * time.Millisecond); return time.Now() }

// TestSettleCountsTheLastStep: after Settle, SchedulerStats counts the step that
// emitted a request's last token (a serve-bench point reads the stats right after its
// requests end: without Settle its decode_steps missed that step now and then).
func TestSettleCountsTheLastStep(t *testing.T) {
	ctx := context.Background()
	e, err := LoadBytes(ctx, "builtin", builtin.Stories260K, Options{Threads: 1, Clock: slowClock{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := 1; i <= 2; i++ {
		if _, err := e.Generate(ctx, Request{Prompt: "Once upon a time", MaxTokens: 4, IgnoreEOS: true}, func(Token) error { return nil }); err != nil {
			t.Fatal(err)
		}
		e.Settle()
		// four tokens: one from the prompt's step, three decode steps
		if got := e.SchedulerStats().DecodeSteps.N; got != int64(3*i) {
			t.Errorf("after request %d: %d decode steps counted, want %d", i, got, 3*i)
		}
	}
}
