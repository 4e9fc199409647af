package serving

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/workloads/metrics"
)

var (
	inprocOnce sync.Once
	inprocEng  *engine.Engine
	inprocErr  error
)

// builtinGen loads the built-in stories260K once for this file's tests.
func builtinGen(t *testing.T) *engine.Engine {
	t.Helper()
	inprocOnce.Do(func() {
		inprocEng, inprocErr = engine.LoadBytes(context.Background(), builtin.Name, builtin.Stories260K, engine.Options{Threads: 1})
	})
	if inprocErr != nil {
		t.Fatal(inprocErr)
	}
	return inprocEng
}

// lateConsumer is a Generator that takes the engine's first token only after a delay,
// as a client goroutine kept off the CPU would: the engine meanwhile emits the rest,
// which then arrive in one burst.
type lateConsumer struct {
	Generator
	delay time.Duration
}

func (g lateConsumer) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	return g.Generator.Generate(ctx, req, func(t engine.Token) error {
		if t.Index == 0 {
			time.Sleep(g.delay)
		}
		return emit(t)
	})
}

// TestInProcTimesTokensAtEmit: a consumer that takes the tokens late does not move
// them. The built-in model emits 8 tokens in a few milliseconds; the client takes the
// first one 500 ms later. TTFT and E2EL must be the engine's times (well under 500 ms)
// and the gaps one per token, not a 500 ms wait followed by a burst of zeros.
func TestInProcTimesTokensAtEmit(t *testing.T) {
	const delay = 500 * time.Millisecond
	c := &InProc{Gen: lateConsumer{builtinGen(t), delay}, IgnoreEOS: true}
	t0 := time.Now()
	now := func() time.Duration { return time.Since(t0) }
	var rec metrics.Record
	c.Do(context.Background(), &Request{Prompt: "Once upon a time", OutputLen: 8}, &rec, now)
	if !rec.Success || rec.OutputTokens != 8 {
		t.Fatalf("record %+v", rec)
	}
	if rec.TTFT >= delay || rec.Latency >= delay {
		t.Errorf("TTFT %v, E2EL %v: the consumer's %v delay was measured, not the engine", rec.TTFT, rec.Latency, delay)
	}
	var sum time.Duration
	for _, g := range rec.ITL {
		sum += g
		if g <= 0 {
			t.Errorf("ITL gap %v: tokens of two steps stamped at once", g)
		}
	}
	if rec.TTFT+sum != rec.Latency {
		t.Errorf("TTFT %v + ITL %v != E2EL %v", rec.TTFT, sum, rec.Latency)
	}
}

// stampScript is a Generator emitting fixed tokens with fixed emit times.
type stampScript []engine.Token

func (s stampScript) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	for _, tok := range s {
		if err := emit(tok); err != nil {
			return engine.Stats{}, err
		}
	}
	return engine.Stats{GenTokens: len(s), StopReason: "length"}, nil
}

// TestInProcChunks: tokens without text go out with the next one that has text, so
// TTFT is the first token with text, the gaps are between chunks, and ChunkTokens
// counts the tokens of each; a last token without text closes the last chunk.
func TestInProcChunks(t *testing.T) {
	base := time.Now()
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	toks := stampScript{
		{ID: 1, Text: "", Index: 0, At: ms(10)}, // the first bytes of a character
		{ID: 2, Text: "é", Index: 1, At: ms(20)},
		{ID: 3, Text: "a", Index: 2, At: ms(30)},
		{ID: 4, Text: "", Index: 3, At: ms(40)},
		{ID: 5, Text: "", Index: 4, At: ms(50)},
	}
	var rec metrics.Record
	(&InProc{Gen: toks, KeepText: true}).Do(context.Background(), &Request{Prompt: "x", OutputLen: 5}, &rec, func() time.Duration { return time.Since(base) })
	near := func(got, want time.Duration) bool {
		d := got - want
		return d > -time.Millisecond && d < time.Millisecond
	}
	start := rec.Start
	if !near(start+rec.TTFT, 20*time.Millisecond) || rec.TTFTContent != rec.TTFT {
		t.Errorf("TTFT %v (content %v) after a start at %v: want the token with text at 20 ms", rec.TTFT, rec.TTFTContent, start)
	}
	if len(rec.ITL) != 2 || !near(rec.ITL[0], 10*time.Millisecond) || !near(rec.ITL[1], 20*time.Millisecond) {
		t.Errorf("ITL %v: want 10 ms then 20 ms", rec.ITL)
	}
	if len(rec.ChunkTokens) != 2 || rec.ChunkTokens[0] != 1 || rec.ChunkTokens[1] != 2 {
		t.Errorf("chunk tokens %v: want [1 2]", rec.ChunkTokens)
	}
	if !near(start+rec.Latency, 50*time.Millisecond) || rec.OutputTokens != 5 || rec.Text != "éa" {
		t.Errorf("E2EL %v, %d tokens, text %q", rec.Latency, rec.OutputTokens, rec.Text)
	}
}

// TestInProcOneChunkPerStep: the tokens the engine emits at one instant (one
// speculative-decoding step: the accepted proposals and the model's token) go out as
// one chunk, so the ITL gaps are between steps, ChunkTokens counts the step's tokens
// and the summary's per-token ITL divides each gap among them; the 1-s peak counts
// tokens, not chunks.
func TestInProcOneChunkPerStep(t *testing.T) {
	base := time.Now()
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	toks := stampScript{
		{ID: 1, Text: "a", Index: 0, At: ms(10)},
		{ID: 2, Text: "b", Index: 1, At: ms(40)}, // one step: three tokens
		{ID: 3, Text: "", Index: 2, At: ms(40)},
		{ID: 4, Text: "d", Index: 3, At: ms(40)},
		{ID: 5, Text: "e", Index: 4, At: ms(50)},
	}
	var rec metrics.Record
	(&InProc{Gen: toks}).Do(context.Background(), &Request{Prompt: "x", OutputLen: 5}, &rec, func() time.Duration { return time.Since(base) })
	near := func(got, want time.Duration) bool {
		d := got - want
		return d > -time.Millisecond && d < time.Millisecond
	}
	if !near(rec.Start+rec.TTFT, 10*time.Millisecond) {
		t.Errorf("TTFT %v after a start at %v: want the first token at 10 ms", rec.TTFT, rec.Start)
	}
	if len(rec.ITL) != 2 || !near(rec.ITL[0], 30*time.Millisecond) || !near(rec.ITL[1], 10*time.Millisecond) {
		t.Fatalf("ITL %v: want 30 ms (a step of three tokens) then 10 ms", rec.ITL)
	}
	if len(rec.ChunkTokens) != 2 || rec.ChunkTokens[0] != 3 || rec.ChunkTokens[1] != 1 {
		t.Fatalf("chunk tokens %v: want [3 1]", rec.ChunkTokens)
	}
	rec.Success, rec.OutputTokens = true, 5
	s := metrics.Summary([]metrics.Record{rec}, time.Second, metrics.ServingConfig{})
	// Per-token ITL: 30 ms over three tokens (10, 10, 10), then 10 ms.
	if s.ITLPerToken.N != 4 || math.Abs(s.ITLPerToken.Mean-10) > 0.5 {
		t.Errorf("per-token ITL n %d mean %.2f ms: want 4 gaps of 10 ms", s.ITLPerToken.N, s.ITLPerToken.Mean)
	}
	if math.Abs(s.ITL.Mean-20) > 0.5 {
		t.Errorf("ITL mean %.2f ms: want 20 (two gaps between chunks)", s.ITL.Mean)
	}
	if s.PeakOutputTokensPerS != 5 || s.MaxOutputTokensPerS != 3 {
		t.Errorf("1-s peak %.0f tokens, %.0f chunks: want 5 and 3", s.PeakOutputTokensPerS, s.MaxOutputTokensPerS)
	}
}
