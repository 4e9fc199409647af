package sample

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// refLogprobs is the textbook reference: p = exp(l) / Σ exp(l) in float64 without a
// shift (the logits here are small), log p, and a full sort for the top tokens.
func refLogprobs(logits []float32, id int32, top int) (float64, []TokenLogprob) {
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l))
	}
	all := make([]TokenLogprob, len(logits))
	for i, l := range logits {
		all[i] = TokenLogprob{int32(i), float32(math.Log(math.Exp(float64(l)) / sum))}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].Logprob > all[b].Logprob })
	return math.Log(math.Exp(float64(logits[id])) / sum), all[:min(top, len(all))]
}

func TestLogprobsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 100, 1000} {
		for range 20 {
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = float32(r.NormFloat64() * 4)
			}
			id := int32(r.IntN(n))
			top := r.IntN(21)
			lp, got := Logprobs(logits, id, top)
			wlp, want := refLogprobs(logits, id, top)
			if math.Abs(float64(lp)-wlp) > 1e-5 {
				t.Fatalf("n %d: logprob %v, want %v", n, lp, wlp)
			}
			if len(got) != len(want) {
				t.Fatalf("n %d top %d: %d tokens, want %d", n, top, len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || math.Abs(float64(got[i].Logprob-want[i].Logprob)) > 1e-5 {
					t.Fatalf("n %d top %d: rank %d = %+v, want %+v", n, top, i, got[i], want[i])
				}
			}
		}
	}
}

func TestLogprobsEdges(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	lp, top := Logprobs([]float32{nan, 0, inf, 0}, 1, 4)
	if math.Abs(float64(lp)-math.Log(0.5)) > 1e-6 || len(top) != 4 || top[0].ID != 1 || top[1].ID != 3 || !math.IsInf(float64(top[3].Logprob), -1) {
		t.Errorf("NaN and -Inf: %v %+v", lp, top)
	}
	// Large logits do not overflow (the shift by the maximum).
	lp, _ = Logprobs([]float32{1000, 1000}, 0, 0)
	if math.Abs(float64(lp)-math.Log(0.5)) > 1e-6 {
		t.Errorf("large logits: %v", lp)
	}
	if lp, top := Logprobs(nil, 0, 3); lp != 0 || top != nil {
		t.Errorf("empty: %v %v", lp, top)
	}
	if lp, top := Logprobs([]float32{1}, 5, 3); lp != 0 || top != nil {
		t.Errorf("id outside: %v %v", lp, top)
	}
}
