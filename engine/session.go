package engine

import (
	"fmt"

	"llmbench/engine/model"
)

// Session is one sequence's decoding context: a contiguous KV cache of its own (not
// the scheduler's paged pool) and activations that tokens are evaluated into, with no
// sampling. Benchmarks (llama-bench) use one directly to time prompt processing and
// token generation, and tests use one as the one-sequence reference for Generate. A
// Session shares the engine's backend, so its calls are serialised with the engine's
// other work.
type Session struct {
	e     *Engine
	cache *model.Cache
	state *model.State
	pos   int
}

// NewSession returns a session that can hold ctx positions (0 = the engine's context).
func (e *Engine) NewSession(ctx int) (*Session, error) {
	if ctx <= 0 || ctx > e.opts.Context {
		ctx = e.opts.Context
	}
	c, err := e.Model.NewCache(ctx, e.opts.KVType)
	if err != nil {
		return nil, err
	}
	// A session never runs more than ctx tokens in one pass: a short one (a tg test's)
	// needs no activations for a full batch.
	st := e.Model.NewState(min(e.opts.Batch, ctx))
	st.Flash = e.opts.FlashAttn
	st.Window = e.opts.Window // over the whole contiguous cache: the dense masked twin of the ring
	e.part.apply(st)
	return &Session{e: e, cache: c, state: st}, nil
}

// Eval appends tokens to the sequence, in forward passes of at most the engine's batch
// size, and returns the logits of the last one (valid until the next call).
func (s *Session) Eval(tokens []int32) ([]float32, error) {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	return s.eval(tokens)
}

func (s *Session) eval(tokens []int32) ([]float32, error) {
	if s.pos+len(tokens) > s.cache.Context {
		return nil, fmt.Errorf("engine: %d tokens at position %d exceed the context of %d: %w", len(tokens), s.pos, s.cache.Context, ErrContextFull)
	}
	var logits []float32
	for i := 0; i < len(tokens); i += s.e.opts.Batch {
		chunk := tokens[i:min(len(tokens), i+s.e.opts.Batch)]
		var err error
		if logits, err = s.e.Model.Forward(s.e.be, s.state, s.cache, chunk, s.pos, false); err != nil {
			return nil, err
		}
		s.pos += len(chunk)
	}
	return logits, nil
}

// Pos returns the number of tokens in the sequence.
func (s *Session) Pos() int { return s.pos }

// Context returns how many positions the session holds.
func (s *Session) Context() int { return s.cache.Context }

// Reset empties the sequence (the cache memory is kept).
func (s *Session) Reset() { s.pos = 0 }

// Truncate drops every token from position n on, so a prefilled context can be reused.
func (s *Session) Truncate(n int) {
	if n >= 0 && n < s.pos {
		s.pos = n
	}
}

// KVBytes returns the memory the session's KV cache holds.
func (s *Session) KVBytes() int64 { return s.cache.Bytes() }
