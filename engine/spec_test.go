package engine

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/model"
	"llmbench/engine/sample"
	"llmbench/engine/synth"
	"llmbench/kernels"
)

const (
	tinyF16 = "../testdata/models/TinyStories-656K.f16.gguf"
	tinyQ8  = "../testdata/models/tinystories-656k-q8_0.gguf"
)

// specEngine loads the model at path with the draft at draft (opened here, closed
// after the engine) and the draft settings of opts.
func specEngine(t *testing.T, path, draft string, opts Options) *Engine {
	t.Helper()
	d, err := OpenDraft(draft)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Threads == 0 {
		opts.Threads = 2
	}
	opts.DraftModel = d
	e, err := Load(context.Background(), path, opts)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); d.Close() })
	return e
}

// runAllStats is runAll keeping each request's Stats.
func runAllStats(t *testing.T, e *Engine, prompts [][]int32, gen int) ([][]int32, []Stats) {
	t.Helper()
	got := make([][]int32, len(prompts))
	sts := make([]Stats, len(prompts))
	errs := make([]error, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() {
			sts[i], errs[i] = e.Generate(context.Background(), Request{Tokens: p, MaxTokens: gen, IgnoreEOS: true}, func(tk Token) error {
				got[i] = append(got[i], tk.ID)
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
	return got, sts
}

// checkSpecStats checks the counts of a request that ran with a draft: tokens per step
// above one when something was accepted, and Stats consistent with the engine's.
func checkSpecStats(t *testing.T, e *Engine, sts []Stats) (drafted, accepted int) {
	t.Helper()
	steps, toks := 0, 0
	for i, st := range sts {
		if st.Accepted > st.Drafted {
			t.Errorf("request %d: %d accepted of %d drafted", i, st.Accepted, st.Drafted)
		}
		// Each step hands over the accepted proposals and one token of the model's.
		if st.GenTokens != st.Steps+st.Accepted {
			t.Errorf("request %d: %d tokens in %d steps with %d accepted proposals", i, st.GenTokens, st.Steps, st.Accepted)
		}
		drafted += st.Drafted
		accepted += st.Accepted
		steps += st.Steps
		toks += st.GenTokens
	}
	e.Settle()
	ss := e.SchedulerStats()
	if ss.DraftedTokens != int64(drafted) || ss.AcceptedTokens != int64(accepted) || ss.SeqSteps != int64(steps) || ss.SeqTokens != int64(toks) {
		t.Errorf("engine counts drafted %d accepted %d steps %d tokens %d; requests add up to %d %d %d %d",
			ss.DraftedTokens, ss.AcceptedTokens, ss.SeqSteps, ss.SeqTokens, drafted, accepted, steps, toks)
	}
	return drafted, accepted
}

// TestSpecGreedyMatchesPlain runs 32 concurrent greedy requests with a draft and
// checks each gets, token for token, what the model alone gives it (solo runs), on
// TinyStories-656K F16 with its Q8_0 quantization as the draft; the requests' draft
// counts must add up and some proposals must have been accepted.
func TestSpecGreedyMatchesPlain(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		gen  int
	}{
		{"draft-max-8", Options{DraftMax: 8, DraftPMin: -1, MaxNumSeqs: 32}, 40},
		// A budget below 32 sequences × 17 tokens: proposals shrink to fit it.
		{"p-min-0.6/small-budget", Options{DraftMax: 16, DraftMin: 1, DraftPMin: 0.6, MaxNumSeqs: 32, MaxNumBatchedTokens: 96, BlockSize: 8}, 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := specEngine(t, tinyF16, tinyQ8, c.opts)
			prompts := testPrompts(e, 32, 11)
			got, sts := runAllStats(t, e, prompts, c.gen)
			checkGreedy(t, e, prompts, got, c.gen)
			drafted, accepted := checkSpecStats(t, e, sts)
			t.Logf("%d of %d proposals accepted (%.1f %%)", accepted, drafted, 100*float64(accepted)/float64(max(drafted, 1)))
			if accepted == 0 {
				t.Error("no proposal accepted: a Q8_0 draft of the same model should agree almost always")
			}
			ss := e.SchedulerStats()
			if tps := float64(ss.SeqTokens) / float64(ss.SeqSteps); tps < 1.5 {
				t.Errorf("%.2f tokens per model step, want well above 1 with a draft that agrees", tps)
			}
		})
	}
}

// TestDraftVocabMismatch loads a draft whose vocabulary differs from the model's and
// expects one line naming the difference.
func TestDraftVocabMismatch(t *testing.T) {
	d, err := ParseDraft("stories260K", builtin.Stories260K)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = Load(context.Background(), tinyF16, Options{Threads: 2, DraftModel: d})
	if err == nil {
		t.Fatal("a draft with another vocabulary was accepted")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "vocabulary") || !strings.Contains(msg, "stories260K") {
		t.Errorf("error %q: want one line naming the draft and the vocabulary difference", msg)
	}
	t.Log(msg)
	for _, o := range []Options{{DraftMax: -1}, {DraftMin: 4, DraftMax: 2}, {DraftPMin: 1.5}, {Window: 64}} {
		o.Threads, o.Draft = 2, tinyQ8
		if _, err := Load(context.Background(), tinyF16, o); err == nil {
			t.Errorf("draft settings %d/%d/%g, window %d accepted", o.DraftMax, o.DraftMin, o.DraftPMin, o.Window)
		}
	}
}

// truncatedDraft returns the built-in model as a draft keeping only its first layers
// (its own embeddings and output): a draft that agrees with the model often but not
// always.
func truncatedDraft(t *testing.T, layers int) *Draft {
	t.Helper()
	d, err := ParseDraft("stories260K-draft", builtin.Stories260K)
	if err != nil {
		t.Fatal(err)
	}
	d.Model.Blocks = d.Model.Blocks[:layers]
	d.Model.Layers = layers
	t.Cleanup(func() { d.Close() })
	return d
}

// chiSquareP returns the probability that a chi-square variable with df degrees of
// freedom exceeds x: the regularized upper incomplete gamma function Q(df/2, x/2)
// (series below a+1, continued fraction above, as Numerical Recipes' gammq).
func chiSquareP(x float64, df int) float64 {
	a, x := float64(df)/2, x/2
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return 1 - sum*math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

func TestChiSquareP(t *testing.T) {
	// Reference values: scipy.stats.chi2.sf.
	for _, c := range []struct {
		x    float64
		df   int
		want float64
	}{{3.841458820694124, 1, 0.05}, {6.6348966010212145, 1, 0.01}, {18.307038053275146, 10, 0.05}, {5, 10, 0.8911780189141512}, {100, 60, 0.0008988}} {
		if got := chiSquareP(c.x, c.df); math.Abs(got-c.want) > 1e-4*max(1, c.want*10) {
			t.Errorf("chiSquareP(%g, %d) = %g, want %g", c.x, c.df, got, c.want)
		}
	}
}

// chiSquare returns the statistic and degrees of freedom of counts against the
// probabilities want (same keys), pooling the bins whose expected count is below 5
// into one (added to the largest bin when the pool itself is below 5).
func chiSquare[K comparable](counts map[K]int, want map[K]float64, n int) (float64, int) {
	type bin struct{ obs, exp float64 }
	var bins []bin
	var pool bin
	for k, p := range want {
		b := bin{float64(counts[k]), p * float64(n)}
		if b.exp < 5 {
			pool.obs += b.obs
			pool.exp += b.exp
			continue
		}
		bins = append(bins, b)
	}
	for k, c := range counts {
		if _, ok := want[k]; !ok { // a token the model cannot give: impossible under want
			pool.obs += float64(c)
		}
	}
	if pool.exp >= 5 {
		bins = append(bins, pool)
	} else if len(bins) > 0 {
		big := 0
		for i := range bins {
			if bins[i].exp > bins[big].exp {
				big = i
			}
		}
		bins[big].obs += pool.obs
		bins[big].exp += pool.exp
	}
	var x float64
	for _, b := range bins {
		x += (b.obs - b.exp) * (b.obs - b.exp) / b.exp
	}
	return x, len(bins) - 1
}

// TestSpecSamplingKeepsDistribution samples four tokens after a fixed prompt many
// times (one seed per request) with a draft that keeps 2 of the model's 5 layers,
// proposing 2 tokens a step, and keeps the first three: the first token comes from the
// prompt's pass, the second and third from one verification (both proposal positions, the rejection
// rule's residual draw and the bonus token). It compares the empirical joint
// distribution of the first two tokens, and of the first three, with the model's
// exact one (sample.Dist at every prefix) by a chi-square test (p > 0.01), and checks
// the sample is large enough: the same counts against the exact distribution shifted
// by 2 % of mass between its two likeliest bins must be rejected (p < 0.01).
func TestSpecSamplingKeepsDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("12000 sampled requests: seconds")
	}
	d := truncatedDraft(t, 2)
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K,
		Options{Threads: 2, DraftModel: d, DraftMax: 2, DraftPMin: -1, MaxNumSeqs: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	params := sample.Params{Temperature: 1.2, TopK: 4}
	prompt := e.Tok.Encode("Once upon a time, there was a", true, true)

	// The exact joint distribution of the first three tokens.
	smp := sample.New(params)
	dist := func(toks []int32) []float32 {
		all, err := e.Logits(toks)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, e.Model.Vocab)
		smp.Dist(all[(len(toks)-1)*e.Model.Vocab:], toks, out)
		return out
	}
	type pair [2]int32
	type triple [3]int32
	want2, want3 := map[pair]float64{}, map[triple]float64{}
	for a, pa := range dist(prompt) {
		if pa == 0 {
			continue
		}
		ta := append(slices.Clone(prompt), int32(a))
		for b, pb := range dist(ta) {
			if pb == 0 {
				continue
			}
			want2[pair{int32(a), int32(b)}] = float64(pa) * float64(pb)
			for c, pc := range dist(append(slices.Clone(ta), int32(b))) {
				if pc > 0 {
					want3[triple{int32(a), int32(b), int32(c)}] = float64(pa) * float64(pb) * float64(pc)
				}
			}
		}
	}

	const n = 12000
	got := make([][]int32, n)
	sts := make([]Stats, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 64 {
		wg.Go(func() {
			for i := range next {
				p := params
				p.Seed = uint64(i)
				var err error
				sts[i], err = e.Generate(context.Background(), Request{Tokens: prompt, MaxTokens: 4, IgnoreEOS: true, Sampling: p}, func(tk Token) error {
					got[i] = append(got[i], tk.ID)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	c2, c3 := map[pair]int{}, map[triple]int{}
	drafted, accepted := 0, 0
	for i, g := range got {
		if len(g) != 4 {
			t.Fatalf("request %d: %d tokens", i, len(g))
		}
		if sts[i].Steps < 2 || sts[i].Drafted < 2 {
			t.Fatalf("request %d: %d proposals in %d steps: the second and third tokens did not come from one verification of two", i, sts[i].Drafted, sts[i].Steps)
		}
		c2[pair{g[0], g[1]}]++
		c3[triple{g[0], g[1], g[2]}]++
		drafted += sts[i].Drafted
		accepted += sts[i].Accepted
	}
	t.Logf("%d requests: %d of %d proposals accepted (%.1f %%)", n, accepted, drafted, 100*float64(accepted)/float64(drafted))
	if accepted == 0 || accepted > drafted*95/100 {
		t.Errorf("%d proposals, %d accepted: want both accepted and refused ones", drafted, accepted)
	}
	x2, df2 := chiSquare(c2, want2, n)
	x3, df3 := chiSquare(c3, want3, n)
	p2, p3 := chiSquareP(x2, df2), chiSquareP(x3, df3)
	t.Logf("first two tokens: chi-square %.1f, %d df, p = %.3f; first three: %.1f, %d df, p = %.3f", x2, df2, p2, x3, df3, p3)
	if p2 <= 0.01 || p3 <= 0.01 {
		t.Errorf("the tokens drawn with the draft do not follow the model's distribution (p = %.4f, %.4f)", p2, p3)
	}
	// Power: the same counts must reject a distribution 2 % of mass away.
	keys := slices.Collect(maps.Keys(want2))
	slices.SortFunc(keys, func(a, b pair) int { return cmp.Compare(want2[b], want2[a]) })
	shifted := maps.Clone(want2)
	shifted[keys[0]] -= 0.02
	shifted[keys[1]] += 0.02
	xs, dfs := chiSquare(c2, shifted, n)
	if ps := chiSquareP(xs, dfs); ps >= 0.01 {
		t.Errorf("a 2 %% shift goes undetected (p = %.3f): too few samples", ps)
	} else {
		t.Logf("a 2 %% shift between the two likeliest pairs (%.3f, %.3f): p = %.2g", want2[keys[0]], want2[keys[1]], ps)
	}
}

// kvRows returns, for each layer, the keys and values of positions 0…n-1 of a
// sequence in cache c (through block table blocks; nil: position p in row p), as F16
// bits (the engine's default cache type).
func kvRows(t *testing.T, c *model.Cache, blocks []int32, n, width int) [][]uint16 {
	t.Helper()
	var out [][]uint16
	for l := range c.K {
		for _, kv := range []kernels.KVView{c.K[l], c.V[l]} {
			if kv.Type != kernels.F16 {
				t.Fatalf("cache type %s, want f16", kv.Type)
			}
			rows := make([]uint16, 0, n*width)
			for p := range n {
				r := p
				if blocks != nil {
					r = int(blocks[p/c.BlockSize])*c.BlockSize + p%c.BlockSize
				}
				rows = append(rows, kv.F16[r*width:(r+1)*width]...)
			}
			out = append(out, rows)
		}
	}
	return out
}

// TestSpecAllRejectedRollsBack runs greedy requests with a draft that is always wrong
// (the model with its output negated: its choice is the model's least likely token)
// and checks that every proposal is refused, that each request gets the tokens and
// leaves the KV contents (every position it kept, in the model's cache and in the
// draft's) of plain decoding, and that no sequence holds a block past its last token
// between steps (the refused positions' blocks went back to the pool).
func TestSpecAllRejectedRollsBack(t *testing.T) {
	d, err := ParseDraft("stories260K-negated", builtin.Stories260K)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	neg := make([]float32, len(d.Model.OutputNorm))
	for i, w := range d.Model.OutputNorm {
		neg[i] = -w
	}
	d.Model.OutputNorm = neg
	const gen = 40
	for _, c := range []struct {
		name    string
		prompts int
		long    bool // skipped in -short mode (its KV captures are slow under -race)
	}{{"one", 1, false}, {"16-concurrent", 16, true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("the one-request case covers the rollback in -short mode")
			}
			plain := builtinEngine(t, Options{BlockSize: 8, NoPrefixCache: true})
			spec := builtinEngine(t, Options{BlockSize: 8, NoPrefixCache: true, DraftModel: d, DraftMax: 4, DraftPMin: -1})
			prompts := testPrompts(plain, c.prompts, 5)
			width := plain.Model.KVHeads * plain.Model.HeadDim
			// What each engine's sequences had cached at the start of their last step,
			// read on the scheduler's goroutine.
			type seen struct {
				kv, dkv    [][]uint16 // the cached positions of each cache
				pos, dpos  int
				toks       []int32
				overBlocks bool
			}
			watch := func(e *Engine) map[int32]*seen {
				m := map[int32]*seen{}
				e.sched.beforeStep = func() {
					for _, pl := range e.sched.plan {
						q := pl.q
						s := m[q.toks[0]<<16|int32(q.nPrompt)]
						if s == nil {
							s = &seen{}
							m[q.toks[0]<<16|int32(q.nPrompt)] = s
						}
						s.pos, s.dpos, s.toks = q.pos, q.dpos, slices.Clone(q.toks)
						s.kv = kvRows(t, e.sched.cache, q.blocks, q.pos, width)
						if e.sched.dcache != nil {
							s.dkv = kvRows(t, e.sched.dcache, q.blocks, q.dpos, width)
						}
					}
				}
				// After a step a table ends at the block of the last token at most: the
				// blocks of refused positions went back to the pool.
				e.sched.afterStep = func() {
					for _, q := range e.sched.active {
						if size := e.sched.pool.size; len(q.blocks) > (len(q.toks)+size-1)/size {
							m[q.toks[0]<<16|int32(q.nPrompt)].overBlocks = true
						}
					}
				}
				return m
			}
			wp, ws := watch(plain), watch(spec)
			want := runAll(t, plain, prompts, gen)
			got, sts := runAllStats(t, spec, prompts, gen)
			for i := range prompts {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("request %d: %v with the draft, %v without", i, got[i], want[i])
				}
				if sts[i].Accepted != 0 || sts[i].Drafted == 0 {
					t.Errorf("request %d: %d of %d proposals accepted, want none of some", i, sts[i].Accepted, sts[i].Drafted)
				}
			}
			if len(wp) != len(prompts) || len(ws) != len(prompts) {
				t.Fatalf("watched %d and %d sequences of %d (prompts must differ in first token or length)", len(wp), len(ws), len(prompts))
			}
			for k, p := range wp {
				s := ws[k]
				if s.overBlocks || p.overBlocks {
					t.Errorf("a sequence held a block past its last token after a step")
				}
				// At the last step's start the model's cache held pos tokens: compare them.
				if s.pos != p.pos || !slices.Equal(s.toks, p.toks) {
					t.Fatalf("at the last step: %d cached tokens with the draft, %d without", s.pos, p.pos)
				}
				for l := range p.kv {
					if !slices.Equal(s.kv[l], p.kv[l]) {
						t.Fatalf("KV tensor %d of %d positions differs from plain decoding", l, p.pos)
					}
				}
				// The draft's cache against the draft alone on the same tokens.
				ref, err := d.Model.NewCache(len(s.toks), kernels.F16)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Model.Forward(spec.Backend(), d.Model.NewState(len(s.toks)), ref, s.toks, 0, false); err != nil {
					t.Fatal(err)
				}
				wantD := kvRows(t, ref, nil, s.dpos, width)
				for l := range wantD {
					if !slices.Equal(s.dkv[l], wantD[l]) {
						t.Fatalf("draft KV tensor %d of %d positions differs from the draft alone", l, s.dpos)
					}
				}
			}
		})
	}
}

// specTinyPair writes the small synthetic pair (spec-tiny Q8_0 and its draft) into a
// temporary cache and returns their paths.
func specTinyPair(t *testing.T) (target, draft string) {
	t.Helper()
	dir := t.TempDir()
	var err error
	if target, err = synth.Ensure(context.Background(), dir, "spec-tiny", "Q8_0", 0, nil); err != nil {
		t.Fatal(err)
	}
	if draft, err = synth.Ensure(context.Background(), dir, "spec-tiny"+synth.DraftSuffix, "Q8_0", 0, nil); err != nil {
		t.Fatal(err)
	}
	return target, draft
}

// TestPairAcceptance runs the small synthetic pair under the published llama-server
// settings (--draft-max 24 --draft-min 1 --draft-p-min 0.6): 32 concurrent greedy
// requests get exactly the model's own answers, and the measured acceptance rate is
// within the 60–85 % real pairs show, with more than one token per model step.
func TestPairAcceptance(t *testing.T) {
	target, draft := specTinyPair(t)
	e := specEngine(t, target, draft, Options{DraftMax: 24, DraftMin: 1, DraftPMin: 0.6, MaxNumSeqs: 32})
	prompts := testPrompts(e, 32, 3)
	const gen = 64
	got, sts := runAllStats(t, e, prompts, gen)
	checkGreedy(t, e, prompts, got, gen)
	drafted, accepted := checkSpecStats(t, e, sts)
	rate := float64(accepted) / float64(drafted)
	ss := e.SchedulerStats()
	tps := float64(ss.SeqTokens) / float64(ss.SeqSteps)
	t.Logf("spec-tiny pair: %d of %d proposals accepted (%.1f %%), %.2f tokens per model step", accepted, drafted, 100*rate, tps)
	if rate < 0.60 || rate > 0.85 {
		t.Errorf("acceptance rate %.1f %%, want 60–85 %%", 100*rate)
	}
	if tps <= 1.5 {
		t.Errorf("%.2f tokens per model step", tps)
	}
	info, ok := e.DraftInfo()
	if !ok || info.WeightBytes <= 0 || info.KVBytes != int64(e.KVCache().Tokens())*e.draft.Model.KVBytesPerToken(e.KVCache().Type) {
		t.Errorf("draft info %+v", info)
	}
	t.Log(info)
}

// TestSpecStepTokensGoTogether: the tokens of one speculative step reach the caller
// with one emit time, each but the step's last marked More, so that the steps a
// request took are exactly its tokens without More.
func TestSpecStepTokensGoTogether(t *testing.T) {
	target, draft := specTinyPair(t)
	e := specEngine(t, target, draft, Options{DraftMax: 24, DraftMin: 1, DraftPMin: 0.6})
	more := 0
	for i, p := range testPrompts(e, 4, 9) {
		var toks []Token
		st, err := e.Generate(context.Background(), Request{Tokens: p, MaxTokens: 40, IgnoreEOS: true}, func(tk Token) error {
			toks = append(toks, tk)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ends := 0
		for j, tk := range toks {
			if !tk.More {
				ends++
				continue
			}
			more++
			if j+1 == len(toks) || !toks[j+1].At.Equal(tk.At) {
				t.Fatalf("request %d: token %d is marked More but the next was emitted at another time", i, j)
			}
		}
		if ends != st.Steps || toks[len(toks)-1].More {
			t.Errorf("request %d: %d tokens end a step, %d steps; last More=%v", i, ends, st.Steps, toks[len(toks)-1].More)
		}
	}
	if more == 0 {
		t.Error("no step handed over several tokens")
	}
}

// TestSpecGreedyWithPenalties: greedy decoding under repetition and presence
// penalties (whose window takes in the proposals) gives with a draft what it gives
// without.
func TestSpecGreedyWithPenalties(t *testing.T) {
	target, draft := specTinyPair(t)
	plain, err := Load(context.Background(), target, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	spec := specEngine(t, target, draft, Options{DraftMax: 8, DraftMin: 1, DraftPMin: 0.6})
	params := sample.Params{RepeatPenalty: 1.3, RepeatLastN: 16, PresencePenalty: 0.5}
	gen := func(e *Engine, p []int32) ([]int32, Stats) {
		var out []int32
		st, err := e.Generate(context.Background(), Request{Tokens: p, MaxTokens: 48, IgnoreEOS: true, Sampling: params}, func(tk Token) error {
			out = append(out, tk.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, st
	}
	accepted := 0
	for i, p := range testPrompts(plain, 6, 21) {
		want, _ := gen(plain, p)
		got, st := gen(spec, p)
		accepted += st.Accepted
		if !slices.Equal(got, want) {
			t.Errorf("request %d: %v with the draft, %v without", i, got, want)
		}
	}
	if accepted == 0 {
		t.Error("no proposal accepted")
	}
}
