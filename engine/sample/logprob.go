package sample

import (
	"math"
	"slices"
)

// TokenLogprob is a token's log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Logprobs returns the log-probability of token id under the log-softmax of logits
// (the model's raw distribution, before penalties, temperature and truncation: what
// vLLM reports by default) and the top most likely tokens, most likely first, ties by
// lower id. NaN logits count as -Inf. It returns 0 and nil for empty logits or an id
// outside them.
func Logprobs(logits []float32, id int32, top int) (float32, []TokenLogprob) {
	if len(logits) == 0 || id < 0 || int(id) >= len(logits) {
		return 0, nil
	}
	lse := logSumExp(logits)
	lp := func(l float32) float32 {
		if l != l {
			return float32(math.Inf(-1))
		}
		return float32(float64(l) - lse)
	}
	top = min(max(top, 0), len(logits))
	var out []TokenLogprob
	if top > 0 {
		out = make([]TokenLogprob, 0, top+1)
		worse := func(a, b TokenLogprob) bool { // a ranks below b
			return a.Logprob < b.Logprob || (a.Logprob == b.Logprob && a.ID > b.ID)
		}
		for i, l := range logits {
			c := TokenLogprob{int32(i), lp(l)}
			if len(out) == top && !worse(out[top-1], c) {
				continue
			}
			// Insert in order (top is small: at most a few dozen).
			j := len(out)
			for j > 0 && worse(out[j-1], c) {
				j--
			}
			out = slices.Insert(out, j, c)
			if len(out) > top {
				out = out[:top]
			}
		}
	}
	return lp(logits[id]), out
}

// logSumExp is log Σ exp(l) in float64, shifted by the largest logit.
func logSumExp(logits []float32) float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		if l == l && float64(l) > m {
			m = float64(l)
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, l := range logits {
		if l == l {
			s += math.Exp(float64(l) - m)
		}
	}
	return m + math.Log(s)
}
