package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"llmbench/engine/builtin"
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
	for _, o := range []Options{{DraftMax: -1}, {DraftMin: 4, DraftMax: 2}, {DraftPMin: 1.5}} {
		o.Threads, o.Draft = 2, tinyQ8
		if _, err := Load(context.Background(), tinyF16, o); err == nil {
			t.Errorf("draft settings %d/%d/%g accepted", o.DraftMax, o.DraftMin, o.DraftPMin)
		}
	}
}
