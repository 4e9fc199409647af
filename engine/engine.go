// Package engine is llmbench's in-process inference engine: it loads a GGUF model and
// generates tokens on a kernels.Backend, streaming each token to the caller with the
// timings a benchmark needs.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"llmbench/engine/gguf"
	"llmbench/engine/model"
	"llmbench/engine/sample"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
	_ "llmbench/kernels/cpu" // registers the "cpu" backend
)

// Options configures Load.
type Options struct {
	Backend string        // kernels backend name; "" = "cpu"
	Threads int           // 0 = all cores
	Batch   int           // prompt tokens per forward pass (llama.cpp's -ub); 0 = 512
	Context int           // largest context the engine will grow to; 0 = the model's
	KVType  kernels.DType // KV cache element type: F16 (default, as llama.cpp) or F32
	// FlashAttn selects the fused attention path (llama-bench's -fa): scores are never
	// materialised for the whole context; results agree with the plain path.
	FlashAttn bool
}

// Engine is a loaded model ready to generate. Generate calls are serialised.
type Engine struct {
	File   *gguf.File
	Model  *model.Model
	Tok    *tokenizer.Tokenizer
	Source string // path or name the model came from

	be   kernels.Backend
	opts Options
	mu   sync.Mutex
	gen  *Session // reused by Generate, grown as requests need
}

// Load opens the GGUF file at path and prepares it for generation.
func Load(ctx context.Context, path string, opts Options) (*Engine, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	e, err := fromFile(ctx, f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return e, nil
}

// LoadBytes prepares a model held in memory (such as the built-in one).
func LoadBytes(ctx context.Context, name string, data []byte, opts Options) (*Engine, error) {
	f, err := gguf.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return fromFile(ctx, f, name, opts)
}

func fromFile(ctx context.Context, f *gguf.File, source string, opts Options) (*Engine, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := model.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() > m.Vocab {
		return nil, fmt.Errorf("engine: tokenizer has %d tokens but the embedding only %d rows", tok.VocabSize(), m.Vocab)
	}
	if opts.Backend == "" {
		opts.Backend = "cpu"
	}
	if opts.Batch <= 0 {
		opts.Batch = 512
	}
	if opts.Context <= 0 || opts.Context > m.Context {
		opts.Context = m.Context
	}
	if opts.KVType == 0 {
		opts.KVType = kernels.F16
	}
	be, err := kernels.Select(opts.Backend, opts.Threads)
	if err != nil {
		return nil, err
	}
	return &Engine{File: f, Model: m, Tok: tok, Source: source, be: be, opts: opts}, nil
}

// Close releases the backend and the model file.
func (e *Engine) Close() error {
	e.be.Close()
	return e.File.Close()
}

// Backend returns the backend the engine computes on.
func (e *Engine) Backend() kernels.Backend { return e.be }

// Options returns the options in force (defaults filled in).
func (e *Engine) Options() Options { return e.opts }

// Request is one generation.
type Request struct {
	Prompt    string
	Tokens    []int32 // when set, used instead of tokenizing Prompt (no BOS added)
	MaxTokens int     // tokens to generate; ≤ 0 means until end of sequence or context
	Sampling  sample.Params
	IgnoreEOS bool // keep generating past end-of-sequence tokens
}

// Token is one generated token as it is emitted.
type Token struct {
	ID    int32
	Text  string // printable text completed by this token (may be empty mid-character)
	Index int    // 0 for the first generated token
}

// Stats are the measurements of one Generate call. Times are on the monotonic clock.
type Stats struct {
	PromptTokens int
	GenTokens    int
	PromptTime   time.Duration // prompt processing, up to the first token's logits
	GenTime      time.Duration // from the first generated token to the last
	StopReason   string        // "length", "eos", "context", "cancelled"
	PromptIDs    []int32
}

// PromptTPS returns prompt tokens per second.
func (s Stats) PromptTPS() float64 { return rate(s.PromptTokens, s.PromptTime) }

// GenTPS returns generated tokens per second, counting the tokens after the first,
// whose cost is the decode steps inside GenTime (llama.cpp's "eval" figure).
func (s Stats) GenTPS() float64 { return rate(s.GenTokens-1, s.GenTime) }

func rate(n int, d time.Duration) float64 {
	if n <= 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrContextFull reports a prompt that does not fit in the context.
var ErrContextFull = errors.New("prompt does not fit in the context")

// Generate runs one request, calling emit for each generated token. It stops at
// MaxTokens, an end-of-generation token, the context limit, ctx cancellation (returning
// ctx's error with the stats so far) or an error from emit.
func (e *Engine) Generate(ctx context.Context, req Request, emit func(Token) error) (Stats, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := req.Tokens
	if ids == nil {
		ids = e.Tok.Encode(req.Prompt, true, true)
	}
	st := Stats{PromptTokens: len(ids), PromptIDs: ids}
	if len(ids) == 0 {
		return st, errors.New("engine: empty prompt")
	}
	if len(ids) >= e.opts.Context {
		return st, fmt.Errorf("engine: %d prompt tokens, context %d: %w", len(ids), e.opts.Context, ErrContextFull)
	}
	if err := req.Sampling.Validate(); err != nil {
		return st, err
	}
	want := e.opts.Context
	if req.MaxTokens > 0 {
		want = min(want, len(ids)+req.MaxTokens)
	}
	if e.gen == nil || e.gen.Context() < want {
		s, err := e.NewSession(want)
		if err != nil {
			return st, err
		}
		e.gen = s
	}
	sess := e.gen
	sess.Reset()
	smp := sample.New(req.Sampling)
	dec := tokenizer.NewStreamDecoder(e.Tok)
	history := append(make([]int32, 0, want), ids...)

	t0 := time.Now()
	var logits []float32
	for i := 0; i < len(ids); i += e.opts.Batch {
		if err := ctx.Err(); err != nil {
			st.StopReason = "cancelled"
			return st, err
		}
		var err error
		if logits, err = sess.eval(ids[i:min(len(ids), i+e.opts.Batch)]); err != nil {
			return st, err
		}
	}
	st.PromptTime = time.Since(t0)
	tGen := time.Now()
	next := []int32{0}
	for i := 0; ; i++ {
		id := smp.Sample(logits, history)
		history = append(history, id)
		st.GenTokens++
		st.GenTime = time.Since(tGen)
		eog := e.Tok.IsEOG(id) && !req.IgnoreEOS
		text := ""
		if !eog {
			text = dec.Add(id)
		}
		if err := emit(Token{ID: id, Text: text, Index: i}); err != nil {
			return st, err
		}
		switch {
		case eog:
			st.StopReason = "eos"
		case req.MaxTokens > 0 && st.GenTokens >= req.MaxTokens:
			st.StopReason = "length"
		case sess.Pos()+1 >= sess.Context(): // prompt + generated tokens fill the context
			st.StopReason = "context"
		}
		if st.StopReason != "" {
			if rest := dec.Flush(); rest != "" {
				emit(Token{ID: -1, Text: rest, Index: i})
			}
			return st, nil
		}
		if err := ctx.Err(); err != nil {
			st.StopReason = "cancelled"
			return st, err
		}
		next[0] = id
		var err error
		if logits, err = sess.eval(next); err != nil {
			return st, err
		}
	}
}

// Logits runs tokens through the model from position 0 and returns the logits of every
// position (rows of Vocab), for tests and reference comparisons.
func (e *Engine) Logits(tokens []int32) ([]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.Model.NewState(len(tokens))
	c, err := e.Model.NewCache(len(tokens), e.opts.KVType)
	if err != nil {
		return nil, err
	}
	out, err := e.Model.Forward(e.be, st, c, tokens, 0, true)
	return append([]float32(nil), out...), err
}
