package engine

import (
	"errors"
	"fmt"

	"llmbench/engine/model"
	"llmbench/engine/sample"
)

// Batch is a fixed set of sequences stepped together, as TGI's benchmark drives a
// model shard: Prefill reads every sequence's prompt in one forward pass and samples
// each one's first token, then each Decode is one forward pass of one token per
// sequence. The sequences hold KV blocks of a paged cache of their own (not the
// scheduler's pool) in the engine's block size and share the varlen attention path
// of the scheduler's steps. A Batch shares the engine's backend, so its calls are
// serialised with the engine's other work.
type Batch struct {
	e      *Engine
	cache  *model.Cache
	state  *model.State
	n, ctx int       // sequences, positions each
	tables [][]int32 // block table of each sequence
	toks   [][]int32 // each sequence's prompt, then its generated tokens
	pos    []int     // each sequence's tokens in the cache
	smp    []*sample.Sampler
	seqs   []model.Seq
	next   []int32 // the tokens the last step sampled
}

// NewBatch returns a batch of n sequences that can each hold ctx positions (prompt
// plus generated tokens), sampled with p (sequence i seeded p.Seed+i).
func (e *Engine) NewBatch(n, ctx int, p sample.Params) (*Batch, error) {
	if n < 1 {
		return nil, fmt.Errorf("engine: batch of %d sequences", n)
	}
	if ctx < 1 || ctx > e.opts.Context {
		return nil, fmt.Errorf("engine: %d positions per sequence, context %d: %w", ctx, e.opts.Context, ErrContextFull)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	bs := e.kv.BlockSize
	per := (ctx + bs - 1) / bs
	c, err := e.Model.NewPagedCache(n*per, bs, e.opts.KVType)
	if err != nil {
		return nil, err
	}
	b := &Batch{e: e, cache: c, n: n, ctx: ctx, tables: make([][]int32, n), toks: make([][]int32, n),
		pos: make([]int, n), smp: make([]*sample.Sampler, n), seqs: make([]model.Seq, n), next: make([]int32, n)}
	for i := range n {
		b.tables[i] = make([]int32, per)
		for j := range per {
			b.tables[i][j] = int32(i*per + j)
		}
		sp := p
		sp.Seed += uint64(i)
		b.smp[i] = sample.New(sp)
	}
	return b, nil
}

// Size returns the number of sequences.
func (b *Batch) Size() int { return b.n }

// KVBytes returns the memory the batch's KV cache holds.
func (b *Batch) KVBytes() int64 { return b.cache.Bytes() }

// Prefill starts every sequence afresh with its prompt (prompts[i] for sequence i),
// runs all prompts through the model in one forward pass, and returns the token
// sampled for each sequence (valid until the next call).
func (b *Batch) Prefill(prompts [][]int32) ([]int32, error) {
	if len(prompts) != b.n {
		return nil, fmt.Errorf("engine: %d prompts for a batch of %d", len(prompts), b.n)
	}
	total := 0
	for i, p := range prompts {
		if len(p) == 0 {
			return nil, errors.New("engine: empty prompt")
		}
		if len(p) > b.ctx {
			return nil, fmt.Errorf("engine: prompt %d: %d tokens, %d positions per sequence: %w", i, len(p), b.ctx, ErrContextFull)
		}
		b.toks[i], b.pos[i] = append(b.toks[i][:0], p...), 0
		total += len(p)
	}
	return b.step(total)
}

// Decode runs the tokens the last step sampled, one per sequence, in one forward pass
// and returns the next token of each (valid until the next call).
func (b *Batch) Decode() ([]int32, error) {
	if len(b.toks[0]) == 0 {
		return nil, errors.New("engine: decode before prefill")
	}
	if len(b.toks[0]) > b.ctx {
		return nil, fmt.Errorf("engine: %d positions per sequence: %w", b.ctx, ErrContextFull)
	}
	return b.step(b.n)
}

// step runs the tokens of each sequence not yet in the cache (all of a prompt, or
// the last sampled token), tokens rows in all, in one forward pass and samples.
func (b *Batch) step(tokens int) ([]int32, error) {
	if b.state == nil || b.state.Batch < tokens {
		b.state = b.e.Model.NewState(tokens)
		b.state.Flash = b.e.opts.FlashAttn
		b.e.part.apply(b.state)
	}
	for i := range b.n {
		b.seqs[i] = model.Seq{Cache: b.cache, Start: b.pos[i], Tokens: b.toks[i][b.pos[i]:], Blocks: b.tables[i], Logits: true}
	}
	b.e.mu.Lock()
	logits, err := b.e.Model.ForwardBatch(b.e.be, b.state, b.seqs)
	b.e.mu.Unlock()
	clear(b.seqs) // keep no prompt reachable between steps
	if err != nil {
		return nil, err
	}
	vocab := b.e.Model.Vocab
	for i := range b.n {
		b.pos[i] = len(b.toks[i])
		id := b.smp[i].Sample(logits[i*vocab:(i+1)*vocab], b.toks[i])
		b.toks[i] = append(b.toks[i], id)
		b.next[i] = id
	}
	return b.next, nil
}
