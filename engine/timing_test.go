package engine

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"llmbench/engine/sample"
)

// stepClock is a fake clock that moves only when a test says so: base plus a second
// per tick.
type stepClock struct {
	base time.Time
	tick atomic.Int64
}

func (c *stepClock) Now() time.Time { return c.base.Add(time.Duration(c.tick.Load()) * time.Second) }

// TestTokensStampedAtEmit drives the engine on a fake clock that moves one second
// per scheduler step, and a consumer that takes nothing more until the request has
// finished: every token must still carry the time of the step that emitted it (so the
// tokens taken late, all at once, are one second apart, not stamped when taken), the
// stats must be on the same clock, and the scheduler must have timed each decode step.
func TestTokensStampedAtEmit(t *testing.T) {
	clock := &stepClock{base: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	base := clock.base
	e := builtinEngine(t, Options{Clock: clock})
	e.sched.beforeStep = func() { clock.tick.Add(1) }
	const n = 8
	var got []Token
	st, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", MaxTokens: n, IgnoreEOS: true}, func(tok Token) error {
		if tok.Index == 0 { // hold the consumer until the engine has emitted every token
			waitFor(t, "the last step", func() bool { return e.SchedulerStats().DecodeSteps.N == n-1 })
		}
		got = append(got, tok)
		return nil
	})
	if err != nil || len(got) != n {
		t.Fatalf("%d tokens, %v", len(got), err)
	}
	for i, tok := range got {
		// Step 1 reads the prompt and samples token 0; step i+1 samples token i.
		if want := base.Add(time.Duration(i+1) * time.Second); !tok.At.Equal(want) || tok.Index != i {
			t.Errorf("token %d: index %d at %v, want step %d's time %v", i, tok.Index, tok.At.Sub(base), i+1, want.Sub(base))
		}
	}
	if st.PromptTime != time.Second || st.GenTime != (n-1)*time.Second {
		t.Errorf("stats: prompt %v gen %v, want 1s and %ds on the fake clock", st.PromptTime, st.GenTime, n-1)
	}
	steps := e.SchedulerStats().DecodeSteps
	if steps.N != n-1 || steps.Mean() != time.Second || math.Abs(steps.Median().Seconds()-1) > 0.01 {
		t.Errorf("decode steps: %d, mean %v, median %v; want %d of 1s", steps.N, steps.Mean(), steps.Median(), n-1)
	}
}

// TestLastTokenCarriesHeldBytes samples at a high temperature, so that generations
// often end inside a multi-byte character: each token index must be emitted exactly
// once, the bytes the decoder held back going out with the last token.
func TestLastTokenCarriesHeldBytes(t *testing.T) {
	e := builtinEngine(t, Options{})
	held := 0
	for seed := range uint64(200) {
		var got []Token
		st, err := e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: 2, IgnoreEOS: true,
			Sampling: sample.Params{Temperature: 50, Seed: seed}}, func(tok Token) error {
			got = append(got, tok)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != st.GenTokens {
			t.Fatalf("seed %d: %d emits for %d tokens: %+v", seed, len(got), st.GenTokens, got)
		}
		for i, tok := range got {
			if tok.Index != i || tok.ID < 0 {
				t.Fatalf("seed %d: emit %d is %+v", seed, i, tok)
			}
		}
		if last := got[len(got)-1].Text; !utf8.ValidString(last) || strings.ContainsRune(last, utf8.RuneError) {
			held++
		}
	}
	if held == 0 {
		t.Error("no generation ended inside a character: the case is not exercised")
	}
}

// TestHugeMaxTokens asks for 2^63-1 tokens: the request is bounded by the context.
func TestHugeMaxTokens(t *testing.T) {
	e := builtinEngine(t, Options{SeqContext: 24})
	st, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", MaxTokens: math.MaxInt, IgnoreEOS: true}, func(Token) error { return nil })
	if err != nil || st.StopReason != "context" || st.PromptTokens+st.GenTokens != 24 {
		t.Errorf("%+v, %v", st, err)
	}
}

// TestResetPrefixCache runs a prompt twice (the second finds its prefix cached),
// resets, and runs it again: nothing is found, and the pool stays consistent.
func TestResetPrefixCache(t *testing.T) {
	e := builtinEngine(t, Options{BlockSize: 4})
	e.ResetPrefixCache() // before the first request: nothing to drop
	e.sched.beforeStep = func() { checkPool(t, e.sched); checkCached(t, e.sched.pool) }
	prompt := testPrompts(e, 1, 7)[0]
	prompt = append(prompt, prompt...)
	hits := func() int64 {
		before := e.SchedulerStats().PrefixHitTokens
		if _, err := e.Generate(context.Background(), Request{Tokens: prompt, MaxTokens: 4, IgnoreEOS: true}, func(Token) error { return nil }); err != nil {
			t.Fatal(err)
		}
		return e.SchedulerStats().PrefixHitTokens - before
	}
	if a, b := hits(), hits(); a != 0 || b == 0 {
		t.Fatalf("hits %d then %d: want 0 then some", a, b)
	}
	e.ResetPrefixCache()
	if c := hits(); c != 0 {
		t.Errorf("after the reset: %d hits, want 0", c)
	}
	if d := hits(); d == 0 {
		t.Error("the cache no longer works after a reset")
	}
}

// checkCached verifies the prefix cache's bookkeeping: every entry is a block marked
// cached under its key, and nCached counts the free cached blocks.
func checkCached(t *testing.T, p *blockPool) {
	for k, b := range p.byHash {
		if !p.cached[b] || p.key[b] != k {
			t.Errorf("entry %x: block %d (cached %v, key %x)", k, b, p.cached[b], p.key[b])
		}
	}
	n, m := 0, 0
	for b := range p.ref {
		if p.cached[b] {
			m++
			if p.ref[b] == 0 {
				n++
			}
		}
	}
	if n != p.nCached || m != len(p.byHash) {
		t.Errorf("%d free cached blocks, the pool counts %d; %d cached, %d entries", n, p.nCached, m, len(p.byHash))
	}
}

// TestThreadsLimit: more threads than MaxThreads are refused before anything loads.
func TestThreadsLimit(t *testing.T) {
	if err := (Options{Threads: MaxThreads()}).Validate(); err != nil {
		t.Errorf("MaxThreads refused: %v", err)
	}
	for _, n := range []int{MaxThreads() + 1, 100000} {
		if _, err := LoadBytes(context.Background(), "x", nil, Options{Threads: n}); err == nil || !strings.Contains(err.Error(), "threads") {
			t.Errorf("%d threads: %v", n, err)
		}
	}
}

// TestStepTimesQuantiles checks the histogram against exact figures.
func TestStepTimesQuantiles(t *testing.T) {
	var h StepTimes
	if h.Median() != 0 || h.Mean() != 0 {
		t.Error("empty histogram")
	}
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * 10 * time.Microsecond) // 10 µs … 10 ms
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.99, 9900 * time.Microsecond}, {0.01, 100 * time.Microsecond}} {
		if got := h.Quantile(c.q); math.Abs(float64(got-c.want))/float64(c.want) > 0.02 {
			t.Errorf("q%.2f = %v, want %v ±2%%", c.q, got, c.want)
		}
	}
	before := h
	h.add(time.Second)
	h.add(time.Second)
	if d := h.Sub(before); d.N != 2 || d.Mean() != time.Second || math.Abs(d.Median().Seconds()-1) > 0.01 {
		t.Errorf("Sub: %d steps, mean %v, median %v", d.N, d.Mean(), d.Median())
	}
}
