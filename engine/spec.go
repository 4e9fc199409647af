package engine

import (
	"context"
	"fmt"

	"llmbench/engine/gguf"
	"llmbench/engine/model"
	"llmbench/engine/sample"
	"llmbench/engine/tokenizer"
)

// Speculative decoding defaults: llama-server's (--draft-max 16, --draft-min 0,
// --draft-p-min 0.75).
const (
	DefaultDraftMax  = 16
	DefaultDraftPMin = 0.75
)

// Draft is a draft model for speculative decoding (Options.DraftModel): a small model
// with the target's vocabulary whose proposals the target verifies.
type Draft struct {
	File   *gguf.File
	Model  *model.Model
	Tok    *tokenizer.Tokenizer
	Source string // path or name the draft came from
}

// OpenDraft opens the GGUF file at path as a draft model.
func OpenDraft(path string) (*Draft, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := draftFromFile(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

// ParseDraft opens a draft model held in memory (such as the built-in model).
func ParseDraft(name string, data []byte) (*Draft, error) {
	f, err := gguf.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return draftFromFile(f, name)
}

func draftFromFile(f *gguf.File, source string) (*Draft, error) {
	m, err := model.FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("draft %s: %w", source, err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("draft %s: %w", source, err)
	}
	return &Draft{File: f, Model: m, Tok: tok, Source: source}, nil
}

// Close releases the draft's file.
func (d *Draft) Close() error { return d.File.Close() }

// WeightBytes returns the bytes of the draft's tensors.
func (d *Draft) WeightBytes() int64 { return tensorBytes(d.File) }

// CheckVocab reports, in one line, the first difference between the vocabularies of
// a target (model m, tokenizer tok) and the draft; nil when they are the same: same
// tokenizer family, same size, the same text for every token id.
func (d *Draft) CheckVocab(m *model.Model, tok *tokenizer.Tokenizer) error {
	diff := func(what string, target, draft any) error {
		return fmt.Errorf("draft %s does not share the model's vocabulary: %s %v in the model, %v in the draft", d.Source, what, target, draft)
	}
	switch {
	case tok.Model() != d.Tok.Model():
		return diff("tokenizer", fmt.Sprintf("%q", tok.Model()), fmt.Sprintf("%q", d.Tok.Model()))
	case tok.VocabSize() != d.Tok.VocabSize():
		return diff("tokens:", tok.VocabSize(), d.Tok.VocabSize())
	case m.Vocab != d.Model.Vocab:
		return diff("output rows:", m.Vocab, d.Model.Vocab)
	}
	for id := range int32(tok.VocabSize()) {
		if a, b := tok.Token(id), d.Tok.Token(id); a != b {
			return diff(fmt.Sprintf("token %d is", id), fmt.Sprintf("%q", a), fmt.Sprintf("%q", b))
		}
	}
	return nil
}

// WeightBytes returns the bytes of the model's tensors (its file's data).
func (e *Engine) WeightBytes() int64 { return tensorBytes(e.File) }

func tensorBytes(f *gguf.File) int64 {
	var n int64
	for _, t := range f.Tensors {
		n += int64(t.Size)
	}
	return n
}

// DraftInfo describes an engine's draft model: where it came from, its settings and
// its memory (weights and its KV cache pool, which mirrors the model's blocks).
type DraftInfo struct {
	Source      string
	Max, Min    int
	PMin        float64
	WeightBytes int64
	KVBytes     int64
}

// Bytes returns the draft's memory: weights and KV cache.
func (d DraftInfo) Bytes() int64 { return d.WeightBytes + d.KVBytes }

// String describes the draft in one line.
func (d DraftInfo) String() string {
	return fmt.Sprintf("draft %s: up to %d tokens a step (at least %d, p-min %g); weights %s, KV cache %s",
		d.Source, d.Max, d.Min, d.PMin, mib(d.WeightBytes), mib(d.KVBytes))
}

// DraftInfo returns the engine's draft model, and false when it has none.
func (e *Engine) DraftInfo() (DraftInfo, bool) {
	if e.draft == nil {
		return DraftInfo{}, false
	}
	return DraftInfo{Source: e.draft.Source, Max: e.opts.DraftMax, Min: e.opts.DraftMin, PMin: e.opts.DraftPMin,
		WeightBytes: e.draft.WeightBytes(),
		KVBytes:     int64(e.kv.Tokens()) * e.draft.Model.KVBytesPerToken(e.kv.Type)}, true
}

// validateDraft checks the draft settings of o.
func (o Options) validateDraft() error {
	switch {
	case o.DraftMax < 0:
		return fmt.Errorf("draft-max %d is negative", o.DraftMax)
	case o.DraftMin < 0:
		return fmt.Errorf("draft-min %d is negative", o.DraftMin)
	case o.DraftPMin > 1 || o.DraftPMin != o.DraftPMin:
		return fmt.Errorf("draft-p-min %g is not a probability", o.DraftPMin)
	}
	most := o.DraftMax
	if most == 0 {
		most = DefaultDraftMax
	}
	if o.DraftMin > most {
		return fmt.Errorf("draft-min %d is above draft-max %d", o.DraftMin, most)
	}
	return nil
}

// attachDraft opens the draft of e.opts (if any), checks its vocabulary against the
// model's, prepares its weights on the model's backend and fills in the draft
// defaults.
func (e *Engine) attachDraft(ctx context.Context) error {
	o := &e.opts
	d := o.DraftModel
	if d == nil && o.Draft == "" {
		return nil
	}
	if err := o.validateDraft(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if o.Window > 0 {
		// The draft would read the blocks the rolling window gives back.
		return fmt.Errorf("engine: speculative decoding with a rolling window (%d positions) is not supported", o.Window)
	}
	if d == nil {
		var err error
		if d, err = OpenDraft(o.Draft); err != nil {
			return err
		}
		e.ownDraft = true
	}
	fail := func(err error) error {
		if e.ownDraft {
			d.Close()
			e.ownDraft = false
		}
		return err
	}
	if err := d.CheckVocab(e.Model, e.Tok); err != nil {
		return fail(fmt.Errorf("engine: %w", err))
	}
	if err := d.Model.CheckKVType(o.KVType); err != nil {
		return fail(fmt.Errorf("engine: draft %s: %w", d.Source, err))
	}
	if err := prepareWeights(ctx, e.be, d.File, d.Model, o.Progress); err != nil {
		return fail(err)
	}
	if o.DraftMax == 0 {
		o.DraftMax = DefaultDraftMax
	}
	if o.DraftPMin == 0 {
		o.DraftPMin = DefaultDraftPMin
	}
	o.Draft, o.DraftModel = d.Source, d
	e.draft = d
	return nil
}

// draftRoom returns the most tokens q may draft this step: DraftMax, less what its
// max_tokens and its context leave after the token the step samples anyway.
func (s *scheduler) draftRoom(q *seq) int {
	k := s.e.opts.DraftMax
	if mt := q.req.MaxTokens; mt > 0 {
		k = min(k, mt-(len(q.toks)-q.nPrompt)-1)
	}
	k = min(k, s.e.opts.SeqContext-len(q.toks)-1)
	return max(k, 0)
}

// propose runs the draft model for the planned step: it first brings the draft's KV
// cache up to the tokens the model reads this step (prompt chunks, and the last
// sampled token of decoding sequences; one pass), then drafts, one batched pass per
// drafted position, up to each decoding sequence's share (planned.draft): a sequence
// stops once the draft's confidence (TopProb) falls below DraftPMin after DraftMin
// tokens. The proposals are left in q.props and the plan's token counts set to them.
func (s *scheduler) propose() error {
	d := s.e.draft.Model
	vocab := d.Vocab
	s.dbatch, s.drafting = s.dbatch[:0], s.drafting[:0]
	for i := range s.plan {
		p := &s.plan[i]
		q := p.q
		q.props = q.props[:0]
		end := q.pos + p.n
		if p.decode {
			end = len(q.toks)
		}
		want := p.decode && p.draft > 0
		if q.dpos >= end {
			continue
		}
		s.dbatch = append(s.dbatch, model.Seq{Cache: s.dcache, Start: q.dpos, Tokens: q.toks[q.dpos:end], Blocks: q.blocks, Logits: want})
		q.dpos = end
		if want {
			s.drafting = append(s.drafting, i)
		}
	}
	defer func() { clear(s.dbatch) }()
	for len(s.dbatch) > 0 {
		s.e.mu.Lock()
		logits, err := d.ForwardBatch(s.e.be, s.dstate, s.dbatch)
		s.e.mu.Unlock()
		if err != nil {
			return fmt.Errorf("engine: draft: %w", err)
		}
		s.dbatch = s.dbatch[:0]
		next := s.drafting[:0]
		for j, i := range s.drafting {
			p := &s.plan[i]
			q := p.q
			if !s.draftOne(q, p.draft, logits[j*vocab:(j+1)*vocab]) {
				continue
			}
			s.dbatch = append(s.dbatch, model.Seq{Cache: s.dcache, Start: q.dpos, Tokens: q.props[len(q.props)-1:], Blocks: q.blocks, Logits: true})
			q.dpos++
			next = append(next, i)
		}
		s.drafting = next
	}
	for i := range s.plan {
		if p := &s.plan[i]; p.decode {
			p.n = 1 + len(p.q.props)
		}
	}
	return nil
}

// draftOne takes the draft's logits l for q's next position: it stops the draft when
// the draft is unsure (below DraftPMin after DraftMin tokens), else it samples a
// proposal with q's sampling parameters on the draft's own sampler (keeping, when
// sampling, the distribution it was drawn from for the rejection rule). It reports
// whether q drafts on (the proposal must be fed back).
func (s *scheduler) draftOne(q *seq, limit int, l []float32) bool {
	o := s.e.opts
	if len(q.props) >= o.DraftMin && o.DraftPMin > 0 && float64(sample.TopProb(l)) < o.DraftPMin {
		return false
	}
	if q.dsmp == nil {
		p := q.req.Sampling
		p.Seed ^= 0x5eed_d4af7 // the draft's draws are independent of the model's
		q.dsmp = sample.New(p)
	}
	// The history the penalties read: the window they look at, proposals included.
	hist := q.toks
	if len(q.props) > 0 && q.req.Sampling.RepeatLastN != 0 {
		from := 0
		if n := q.req.Sampling.RepeatLastN; n > 0 {
			from = max(0, len(q.toks)+len(q.props)-n)
		}
		q.hist = append(append(q.hist[:0], q.toks[min(from, len(q.toks)):]...), q.props...)
		hist = q.hist
	}
	var id int32
	if q.req.Sampling.Temperature <= 0 {
		id = q.dsmp.Sample(l, hist)
	} else {
		j := len(q.props)
		for len(q.qd) <= j {
			q.qd = append(q.qd, make([]float32, len(l)))
		}
		q.dsmp.Dist(l, hist, q.qd[j])
		id = q.dsmp.DrawFrom(q.qd[j])
	}
	if id < 0 { // no token to draw (logits all NaN): propose nothing more
		return false
	}
	q.props = append(q.props, id)
	return len(q.props) < limit
}

// accept verifies q's proposals against rows, the model's logits for the last token
// and each proposal (one forward pass), and hands over the tokens it keeps, all
// stamped with one time (they reach the client together, as one chunk). Greedy: a proposal is kept while it equals the model's own choice.
// Sampling: proposal x drawn from the draft's q is kept with probability
// min(1, p(x)/q(x)), p the model's distribution (sample.Dist: penalties, truncation,
// temperature); at the first refusal the token is drawn from norm(max(0, p−q)), so
// every token follows p exactly. After the last kept proposal (all of them kept) the
// model's own next token comes free. Both KV caches then forget the refused
// positions (the model's blocks past the tokens kept go back to the pool). It reports
// whether q finished.
func (s *scheduler) accept(q *seq, rows []float32) bool {
	vocab := s.e.Model.Vocab
	k := len(q.props)
	greedy := q.req.Sampling.Temperature <= 0
	q.steps++
	q.drafted += k
	s.nDrafted.Add(int64(k))
	stamp := s.e.opts.Clock.Now()
	before := len(q.toks)
	s.evs = s.evs[:0]
	stop := false
	for j := 0; j <= k && !stop; j++ {
		l := rows[j*vocab : (j+1)*vocab]
		var id int32
		kept := false
		switch {
		case j == k: // every proposal kept: the model's next token
			id = q.smp.Sample(l, q.toks)
		case greedy:
			id = q.smp.Sample(l, q.toks)
			kept = id == q.props[j]
		default:
			if cap(s.pbuf) < vocab {
				s.pbuf = make([]float32, vocab)
			}
			p, qd, x := s.pbuf[:vocab], q.qd[j], q.props[j]
			q.smp.Dist(l, q.toks, p)
			if q.smp.Uniform()*float64(qd[x]) < float64(p[x]) {
				id, kept = x, true
				break
			}
			for t := range p {
				p[t] = max(0, p[t]-qd[t])
			}
			if id = q.smp.DrawFrom(p); id < 0 { // p = q up to rounding
				id = q.smp.Sample(l, q.toks)
			}
		}
		if kept {
			q.accepted++
			s.nAccepted.Add(1)
		}
		ev := s.next(q, id, l, stamp)
		stop = ev.stop != ""
		s.evs = append(s.evs, ev)
		if !kept {
			break
		}
	}
	// The step's tokens go out together, each but the last marked as followed by more.
	for i := range s.evs {
		s.evs[i].more = i < len(s.evs)-1
		q.out.push(s.evs[i])
	}
	clear(s.evs)
	s.nSteps.Add(1)
	s.nTokens.Add(int64(len(q.toks) - before))
	if stop {
		s.finish(q)
		return true
	}
	// The model's cache holds the tokens before the last; the draft's at most as much.
	q.pos = len(q.toks) - 1
	q.dpos = min(q.dpos, q.pos)
	if keep := (len(q.toks) + s.pool.size - 1) / s.pool.size; len(q.blocks) > keep {
		s.pool.free(q.blocks[keep:])
		q.blocks = q.blocks[:keep]
	}
	s.register(q)
	return false
}
