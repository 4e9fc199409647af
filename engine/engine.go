// Package engine is llmbench's in-process inference engine: it loads a GGUF model and
// generates tokens on a kernels.Backend, streaming each token to the caller with the
// timings a benchmark needs.
package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	Backend string // kernels backend name; "" = "cpu"
	// Threads is the backend's thread count: 0 = all cores, at most MaxThreads().
	Threads int
	Batch   int // prompt tokens per forward pass (llama.cpp's -ub); 0 = 512
	Context int // largest context the engine will grow to; 0 = the model's
	// KVType is the KV cache element type: F16 (default, as llama.cpp), Q8_0, or F32
	// with KVTypeSet (the zero value, kernels.F32, alone means the default).
	KVType    kernels.DType
	KVTypeSet bool // KVType was chosen, so F32 means F32
	// FlashAttn selects the fused attention path (llama-bench's -fa): scores are never
	// materialised for the whole context; results agree with the plain path.
	FlashAttn bool
	// Partitions chooses partitioned paged attention (see PartitionMode): auto (the
	// default) partitions a row whose own context reaches the crossover measured on
	// this machine at this thread count; off and on force the choice (as does the
	// PartitionsEnv environment variable under auto).
	Partitions PartitionMode
	// PartitionFrom, under PartitionsAuto, fixes the crossover (a context length in
	// positions) instead of measuring it. 0 = measured (or stored).
	PartitionFrom int
	// PartitionSize is the positions of one partition. 0 = PartitionSize.
	PartitionSize int
	// CalibrationDir is where measured crossovers are kept, one file per backend,
	// thread count, head layout, cache type and path. "" = llmbench/calibration under
	// the user's cache directory.
	CalibrationDir string
	// MaxNumSeqs bounds the sequences Generate runs at once in one batch (vLLM's
	// --max-num-seqs); requests beyond it, or beyond the KV blocks free, wait, first come
	// first served. 0 = DefaultMaxNumSeqs.
	MaxNumSeqs int
	// MaxNumBatchedTokens bounds the tokens of one scheduler step: a decode token per
	// running sequence plus chunks of prompts being read (vLLM's
	// --max-num-batched-tokens). 0 = DefaultMaxNumBatchedTokens; at least MaxNumSeqs.
	MaxNumBatchedTokens int
	// SeqContext is the context of one sequence under Generate: prompt plus generated
	// tokens. 0 = min(Context, DefaultSeqContext); at most Context, and at most the
	// tokens the KV cache pool holds.
	SeqContext int
	// Window is rolling-window attention (JetStream's, used when its cache is shorter
	// than input + output): each sequence keeps only its last Window positions in the
	// KV cache, in a ring of blocks (WindowBlocks) it reuses as it goes, and each
	// position attends over the Window positions up to it, keeping its true RoPE
	// position; a sequence may then run past what the pool holds, up to SeqContext.
	// 0 = the model's own sliding window (its metadata), if it has one.
	Window int
	// BlockSize is the positions of one paged KV cache block (vLLM's --block-size).
	// 0 = DefaultBlockSize.
	BlockSize int
	// KVCacheMemory is the KV cache pool of Generate in bytes (vLLM's
	// --kv-cache-memory). 0 = KVCacheFraction of the memory available when that is
	// set, else enough for MaxNumSeqs sequences of SeqContext tokens, at most
	// KVMemFraction of the memory available.
	KVCacheMemory int64
	// KVCacheFraction, when KVCacheMemory is 0, sizes the pool as this share (0 to 1)
	// of the memory available at load time. 0 = the default sizing.
	KVCacheFraction float64
	// NoMmap makes Load read the model file into memory instead of mapping it
	// (llama.cpp's --no-mmap, llama-bench's -mmp 0).
	NoMmap bool
	// NoPrefixCache turns off the prefix cache (vLLM's --no-enable-prefix-caching):
	// no KV blocks are shared between requests.
	NoPrefixCache bool
	// Progress, when not nil, follows the weights' preparation for the backend (their
	// conversion to its own layout), which takes seconds on big models.
	Progress Progress
	// Draft is the path of a draft model for speculative decoding (llama-server's -md):
	// it proposes up to DraftMax tokens a step and the model verifies them in one
	// forward pass. "" = none, unless DraftModel is set. It must share the model's
	// vocabulary.
	Draft string
	// DraftModel is a draft already opened (OpenDraft); it wins over Draft. The caller
	// closes it after the engine.
	DraftModel *Draft
	// DraftMax is the most tokens the draft proposes a step (--draft-max);
	// 0 = DefaultDraftMax.
	DraftMax int
	// DraftMin is the fewest tokens the draft proposes a step, whatever its confidence
	// (--draft-min), at most DraftMax.
	DraftMin int
	// DraftPMin ends a step's draft once the draft's most likely next token has a
	// probability below it (--draft-p-min), after DraftMin tokens; 0 = DefaultDraftPMin,
	// negative = never.
	DraftPMin float64
	// Clock stamps each generated token when the scheduler emits it (Token.At, the
	// Stats times) and times the scheduler's steps; nil = the system's clock. Tests
	// inject a fake one.
	Clock Clock
}

// Progress follows a long step of Load: Progress(step, done, total) is called as it
// goes, done and total counted in bytes (an interface, so that Options stay comparable).
type Progress interface {
	Progress(step string, done, total int64)
}

// PrepareStep names Load's step that prepares the weights for the backend.
const PrepareStep = "preparing weights"

// Clock tells the time (an interface, so that Options stay comparable).
type Clock interface {
	Now() time.Time
}

// systemClock is time.Now.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// MaxThreads returns the most threads Options.Threads may ask for: four per CPU, and
// at least 64. More than that is a mistake (-t 100000), not an experiment: each
// thread is a goroutine with scratch buffers of its own.
func MaxThreads() int { return max(64, 4*runtime.NumCPU()) }

// Validate reports options that no engine can honour; Load and LoadBytes call it
// first, so every command that loads a model refuses them the same way.
func (o Options) Validate() error {
	if m := MaxThreads(); o.Threads > m {
		return fmt.Errorf("%d threads is more than the limit of %d (4 per CPU, %d CPUs, at least 64)", o.Threads, m, runtime.NumCPU())
	}
	return nil
}

// Engine is a loaded model ready to generate. Concurrent Generate calls are batched
// by a continuous-batching scheduler.
type Engine struct {
	File   *gguf.File
	Model  *model.Model
	Tok    *tokenizer.Tokenizer
	Source string // path or name the model came from

	be    kernels.Backend
	opts  Options
	kv    KVCacheInfo
	part  PartitionInfo
	mu    sync.Mutex // held for each use of the backend (a scheduler step, Session.Eval)
	sched *scheduler
	draft *Draft // speculative decoding's draft model; nil = none
	// ownDraft: the engine opened the draft (Options.Draft) and closes it.
	ownDraft bool
}

// Load opens the GGUF file at path (the first part of a split model, whose other
// parts are found beside it) and prepares it for generation.
func Load(ctx context.Context, path string, opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	open := gguf.Open
	if opts.NoMmap {
		open = gguf.ReadFile
	}
	f, err := open(path) // a split model's first part: every part
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
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
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
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	if opts.Batch <= 0 {
		opts.Batch = 512
	}
	if opts.Context <= 0 || opts.Context > m.Context {
		opts.Context = m.Context
	}
	if opts.KVType == 0 && !opts.KVTypeSet {
		opts.KVType = kernels.F16
	}
	if opts.MaxNumSeqs <= 0 {
		opts.MaxNumSeqs = DefaultMaxNumSeqs
	}
	if opts.MaxNumBatchedTokens <= 0 {
		opts.MaxNumBatchedTokens = DefaultMaxNumBatchedTokens
	}
	opts.MaxNumBatchedTokens = max(opts.MaxNumBatchedTokens, opts.MaxNumSeqs)
	if opts.SeqContext <= 0 {
		opts.SeqContext = min(opts.Context, DefaultSeqContext)
	}
	opts.SeqContext = min(opts.SeqContext, opts.Context)
	if opts.Window < 0 {
		return nil, fmt.Errorf("engine: rolling window of %d positions", opts.Window)
	}
	if opts.Window == 0 {
		opts.Window = m.SlidingWindow
	}
	kv, err := sizeKVCache(m, &opts, memAvailable())
	if err != nil {
		return nil, err
	}
	be, err := kernels.Select(opts.Backend, opts.Threads)
	if err != nil {
		return nil, err
	}
	if err := prepareWeights(ctx, be, f, m, opts.Progress); err != nil {
		be.Close()
		return nil, err
	}
	part, err := choosePartitions(m, be, &opts)
	if err != nil {
		be.Close()
		return nil, err
	}
	e := &Engine{File: f, Model: m, Tok: tok, Source: source, be: be, opts: opts, kv: kv, part: part}
	if err := e.attachDraft(ctx); err != nil {
		be.Close()
		return nil, err
	}
	e.sched = newScheduler(e)
	return e, nil
}

// prepareWeights hands every matrix the model multiplies to the backend's Preparer,
// where it has one, so that the first request does not pay for the conversion, and
// releases the file's pages of each matrix the backend copied as soon as it is copied:
// the weights are then resident once (the copy), not twice, and the peak stays one
// matrix above that. A released page that is read again (a tied embedding's row) comes
// back from the file.
func prepareWeights(ctx context.Context, be kernels.Backend, f *gguf.File, m *model.Model, p Progress) error {
	pr, ok := be.(kernels.Preparer)
	if !ok {
		return nil
	}
	ws := m.Matrices()
	var done, total int64
	for _, w := range ws {
		total += int64(len(w.Data))
	}
	copied := make([]*kernels.Matrix, 0, len(ws))
	for _, w := range ws {
		if err := ctx.Err(); err != nil {
			return err
		}
		if pr.Prepare(w) {
			copied = append(copied, w)
			if err := f.Release(w.Data); err != nil {
				return fmt.Errorf("engine: %w", err)
			}
		}
		done += int64(len(w.Data))
		if p != nil {
			p.Progress(PrepareStep, done, total)
		}
	}
	// Reading the next matrix maps the file's cached pages around each fault (the
	// kernel's fault-around window, 64 KiB), the end of a released neighbour included:
	// release them all once more.
	for _, w := range copied {
		if err := f.Release(w.Data); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	return nil
}

// Close stops the scheduler (failing the requests it holds with ErrClosed) and
// releases the backend and the model file.
func (e *Engine) Close() error {
	e.sched.close()
	// A Session.Eval still running holds mu: wait for it before the backend unmaps its
	// weight copies and the file goes.
	e.mu.Lock()
	defer e.mu.Unlock()
	e.be.Close()
	if e.ownDraft {
		e.draft.Close()
	}
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
	// Logprobs asks for each generated token's log-probability (Token.Logprob) and
	// its TopLogprobs most likely alternatives (Token.Top), from the log-softmax of
	// the logits the token was sampled from (before penalties and temperature).
	Logprobs    bool
	TopLogprobs int
}

// Token is one generated token as it is emitted.
type Token struct {
	ID int32
	// Text is the printable text completed by this token: empty mid-character; on the
	// last token of a generation it includes whatever the decoder still held back.
	Text  string
	Index int // 0 for the first generated token; each index is emitted once
	// At is when the engine emitted the token: the scheduler's step sampled it and
	// handed it over (Options.Clock). A consumer that takes tokens late (several at
	// once) still sees when each was produced.
	At time.Time
	// Logprob and Top are the token's log-probability and the most likely tokens
	// (Request.Logprobs; zero and nil otherwise).
	Logprob float32
	Top     []sample.TokenLogprob
	// More says another token of the same scheduler step follows at once (a
	// speculative-decoding step hands over its accepted tokens together, with one At):
	// a streaming server sends them in one chunk.
	More bool
}

// Stats are the measurements of one Generate call. Times are on the monotonic clock.
type Stats struct {
	PromptTokens int
	GenTokens    int
	PromptTime   time.Duration // prompt processing, up to the first token's logits
	GenTime      time.Duration // from the first generated token to the last
	StopReason   string        // "length", "eos", "context", "cancelled"
	PromptIDs    []int32
	// Steps counts the scheduler steps that gave the request tokens (its first token's
	// included); with a draft a step can give several.
	Steps int
	// Drafted and Accepted count the draft's proposals for the request and those the
	// model accepted (speculative decoding; zero without a draft).
	Drafted, Accepted int
}

// AcceptanceRate returns the share of drafted tokens the model accepted (0 when none
// were drafted).
func (s Stats) AcceptanceRate() float64 {
	if s.Drafted == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Drafted)
}

// TokensPerStep returns the generated tokens per scheduler step that gave the request
// tokens: 1 without a draft, up to DraftMax+1 with one.
func (s Stats) TokensPerStep() float64 {
	if s.Steps == 0 {
		return 0
	}
	return float64(s.GenTokens) / float64(s.Steps)
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
// MaxTokens, an end-of-generation token, the end of the sequence's context
// (Options.SeqContext), ctx cancellation (returning ctx's error with the stats so far)
// or an error from emit. Generate may be called concurrently: the scheduler batches
// the running requests into shared forward passes over a paged KV cache, and a request
// waits while MaxNumSeqs are running or the pool has no blocks for it (a request
// preempted to free blocks recomputes its tokens later, emitting nothing twice). emit
// is called on the caller's goroutine, once per token index; each Token carries the
// time the scheduler emitted it, which is what a benchmark should read, since the
// caller may take several tokens at once when it falls behind.
func (e *Engine) Generate(ctx context.Context, req Request, emit func(Token) error) (Stats, error) {
	t0 := e.opts.Clock.Now()
	ids := req.Tokens
	if ids == nil {
		ids = e.Tok.Encode(req.Prompt, true, true)
	}
	st := Stats{PromptTokens: len(ids), PromptIDs: ids}
	if len(ids) == 0 {
		return st, errors.New("engine: empty prompt")
	}
	if len(ids) >= e.opts.SeqContext {
		if e.opts.SeqContext == e.kv.Tokens() {
			return st, fmt.Errorf("engine: %d prompt tokens do not fit in the KV cache pool of %d tokens (%d blocks of %d): %w",
				len(ids), e.kv.Tokens(), e.kv.Blocks, e.kv.BlockSize, ErrContextFull)
		}
		return st, fmt.Errorf("engine: %d prompt tokens, context %d: %w", len(ids), e.opts.SeqContext, ErrContextFull)
	}
	if err := req.Sampling.Validate(); err != nil {
		return st, err
	}
	for _, id := range ids {
		if id < 0 || int(id) >= e.Model.Vocab {
			return st, fmt.Errorf("engine: prompt token %d outside the vocabulary of %d", id, e.Model.Vocab)
		}
	}
	// The scheduler drops the request as soon as qctx ends: when the caller cancels, or
	// when this call returns for any reason (an error from emit included).
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	want := e.opts.SeqContext
	if req.MaxTokens > 0 && req.MaxTokens < want-len(ids) { // (len(ids)+MaxTokens may overflow)
		want = len(ids) + req.MaxTokens
	}
	q := &seq{ctx: qctx, req: req, smp: sample.New(req.Sampling), nPrompt: len(ids),
		toks: append(make([]int32, 0, want), ids...)}
	q.out.wake = make(chan struct{}, 1)
	if err := e.sched.enqueue(qctx, q); err != nil {
		if ctx.Err() != nil {
			st.StopReason = "cancelled"
			return st, ctx.Err()
		}
		return st, err
	}
	dec := tokenizer.NewStreamDecoder(e.Tok)
	var evs []event
	var tGen time.Time
	for {
		select {
		case <-q.out.wake:
		case <-ctx.Done():
			st.StopReason = "cancelled"
			return st, ctx.Err()
		}
		evs = q.out.take(evs)
		for _, ev := range evs {
			if ev.err != nil {
				return st, ev.err
			}
			i := st.GenTokens
			if i == 0 {
				st.PromptTime, tGen = ev.at.Sub(t0), ev.at
			}
			st.GenTokens++
			st.GenTime = ev.at.Sub(tGen)
			st.Steps, st.Drafted, st.Accepted = ev.steps, ev.drafted, ev.accepted
			eog := e.Tok.IsEOG(ev.id) && !req.IgnoreEOS
			text := ""
			if !eog {
				text = dec.Add(ev.id)
			}
			if ev.stop != "" {
				// The last token carries what the decoder held back (an unfinished
				// character), so that no token index is emitted twice.
				text += dec.Flush()
			}
			if err := emit(Token{ID: ev.id, Text: text, Index: i, At: ev.at, Logprob: ev.logprob, Top: ev.top, More: ev.more && ev.stop == ""}); err != nil {
				return st, err
			}
			if ev.stop != "" {
				st.StopReason = ev.stop
				return st, nil
			}
			if err := ctx.Err(); err != nil {
				st.StopReason = "cancelled"
				return st, err
			}
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
