// Package sample picks the next token from a row of logits: greedy, temperature, top-k,
// top-p, min-p and llama.cpp's repetition/frequency/presence penalties, with a seeded
// random source so that a run can be reproduced exactly.
//
// The stages run in the order of llama.cpp's default sampler chain (common/sampling.cpp):
// penalties → top-k → top-p → min-p → temperature → seeded draw. As in llama.cpp, top-p
// and min-p look at the probabilities before temperature is applied; temperature only
// shapes the final draw among the survivors.
package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Params configures a Sampler. The zero value is greedy decoding with no penalties.
type Params struct {
	// Temperature divides the surviving logits before the draw; <= 0 means greedy
	// (argmax after penalties, lowest token id on ties).
	Temperature float32
	// TopK keeps the K most likely tokens; <= 0 disables it.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability mass reaches
	// TopP; <= 0 or >= 1 disables it, so that the zero value means "off". (llama.cpp
	// reads top_p = 0 as "keep one token"; here that is TopK = 1.)
	TopP float32
	// MinP drops tokens whose probability is below MinP times the most likely one's;
	// <= 0 disables it.
	MinP float32
	// RepeatPenalty divides positive logits (multiplies negative ones) of tokens seen
	// in the last RepeatLastN tokens of the history; 1 or 0 disables it.
	RepeatPenalty float32
	// RepeatLastN is how many trailing history tokens the penalties look at; 0 disables
	// the penalties, a negative value means the whole history.
	RepeatLastN int
	// FrequencyPenalty is subtracted from a token's logit once per occurrence in the
	// penalty window.
	FrequencyPenalty float32
	// PresencePenalty is subtracted once from the logit of every token present in the
	// penalty window.
	PresencePenalty float32
	// Seed seeds the random source of the draw.
	Seed uint64
}

// DefaultParams returns llama.cpp's default sampling settings (common_params_sampling):
// temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, penalties off over a 64-token window.
func DefaultParams() Params {
	return Params{
		Temperature:   0.8,
		TopK:          40,
		TopP:          0.95,
		MinP:          0.05,
		RepeatPenalty: 1.0,
		RepeatLastN:   64,
	}
}

// Validate reports parameters that cannot be meaningful (NaN, negative penalties or a
// top-p/min-p outside [0, 1]).
func (p Params) Validate() error {
	bad := func(name string, v float32) error {
		return fmt.Errorf("sample: %s = %v is not valid", name, v)
	}
	for _, f := range []struct {
		name string
		v    float32
	}{{"temperature", p.Temperature}, {"top_p", p.TopP}, {"min_p", p.MinP},
		{"repeat_penalty", p.RepeatPenalty}, {"frequency_penalty", p.FrequencyPenalty},
		{"presence_penalty", p.PresencePenalty}} {
		if math.IsNaN(float64(f.v)) || math.IsInf(float64(f.v), 0) {
			return bad(f.name, f.v)
		}
	}
	if p.TopP < 0 {
		return bad("top_p", p.TopP)
	}
	if p.MinP < 0 || p.MinP > 1 {
		return bad("min_p", p.MinP)
	}
	if p.RepeatPenalty < 0 {
		return bad("repeat_penalty", p.RepeatPenalty)
	}
	return nil
}

// cand is one candidate token.
type cand struct {
	id    int32
	logit float32
	p     float32
}

// better orders candidates by descending logit, then ascending id, so that every
// ordering in this package is total and deterministic.
func better(a, b cand) bool {
	if a.logit != b.logit {
		return a.logit > b.logit
	}
	return a.id < b.id
}

func cmpCand(a, b cand) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// Sampler draws tokens with fixed Params. It keeps scratch buffers between calls, so a
// Sampler must not be used from two goroutines at once; use one per sequence.
type Sampler struct {
	p    Params
	rng  *rand.Rand
	pcg  *rand.PCG
	buf  []cand  // candidates; sized to the vocabulary on first use
	cnt  []int32 // per-token occurrence counts for the penalties, all zero between calls
	seen []int32 // tokens with a non-zero count
}

// New returns a Sampler for p, seeded with p.Seed.
func New(p Params) *Sampler {
	s := &Sampler{p: p}
	s.pcg = rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15)
	s.rng = rand.New(s.pcg)
	return s
}

// Params returns the parameters the Sampler was built with.
func (s *Sampler) Params() Params { return s.p }

// Reseed restarts the random source from seed, as if the Sampler were new.
func (s *Sampler) Reseed(seed uint64) {
	s.p.Seed = seed
	s.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
}

// Sample returns the next token for logits (one value per vocabulary entry) given the
// tokens generated or read so far (history, oldest first; only its tail is used by the
// penalties). NaN logits are treated as -Inf. It returns -1 only when logits is empty.
// logits is not modified.
func (s *Sampler) Sample(logits []float32, history []int32) int32 {
	n := len(logits)
	if n == 0 {
		return -1
	}
	c := s.load(logits)
	s.penalize(c, history)
	if s.p.Temperature <= 0 {
		return argmax(c)
	}
	c = s.filter(c)
	temperature(c, s.p.Temperature)
	return s.draw(c)
}

// filter runs the truncation stages in chain order: top-k, top-p, min-p.
func (s *Sampler) filter(c []cand) []cand {
	c = topK(c, s.p.TopK)
	c = topP(c, s.p.TopP)
	return minP(c, s.p.MinP)
}

// load copies logits into the candidate buffer (index = token id), mapping NaN to -Inf.
func (s *Sampler) load(logits []float32) []cand {
	n := len(logits)
	if cap(s.buf) < n {
		s.buf = make([]cand, n)
	}
	c := s.buf[:n]
	for i, l := range logits {
		if l != l { // NaN
			l = float32(math.Inf(-1))
		}
		c[i] = cand{id: int32(i), logit: l}
	}
	return c
}

// penalize applies llama.cpp's penalties sampler to c, which must still be indexed by
// token id: for each token seen in the window, a positive logit is divided by the
// repeat penalty (a non-positive one multiplied), then count×frequency + presence is
// subtracted.
func (s *Sampler) penalize(c []cand, history []int32) {
	p := s.p
	if p.RepeatLastN == 0 || ((p.RepeatPenalty == 1 || p.RepeatPenalty == 0) && p.FrequencyPenalty == 0 && p.PresencePenalty == 0) {
		return
	}
	win := history
	if p.RepeatLastN > 0 && len(win) > p.RepeatLastN {
		win = win[len(win)-p.RepeatLastN:]
	}
	if len(win) == 0 {
		return
	}
	if cap(s.cnt) < len(c) {
		s.cnt = make([]int32, len(c))
	}
	cnt := s.cnt[:len(c)]
	seen := s.seen[:0]
	for _, t := range win {
		if t < 0 || int(t) >= len(c) {
			continue
		}
		if cnt[t] == 0 {
			seen = append(seen, t)
		}
		cnt[t]++
	}
	rp := p.RepeatPenalty
	if rp == 0 {
		rp = 1
	}
	for _, t := range seen {
		l := c[t].logit
		if l <= 0 {
			l *= rp
		} else {
			l /= rp
		}
		l -= float32(cnt[t])*p.FrequencyPenalty + p.PresencePenalty
		c[t].logit = l
		cnt[t] = 0
	}
	s.seen = seen
}

// argmax returns the id of the largest logit, the lowest id on ties (and 0 when every
// logit is -Inf).
// c must be in id order.
func argmax(c []cand) int32 {
	best, bl := 0, c[0].logit
	for i := 1; i < len(c); i++ {
		if l := c[i].logit; l > bl {
			best, bl = i, l
		}
	}
	return c[best].id
}

// selectTop rearranges c so that c[:k] holds the k best candidates in order, leaving the
// others in c[k:]. It uses a k-element min-heap (O(n log k)) rather than a full sort.
func selectTop(c []cand, k int) {
	if k <= 0 {
		return
	}
	if k >= len(c) {
		slices.SortFunc(c, cmpCand)
		return
	}
	h := c[:k]
	// The heap root is the worst of the current top k.
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for i := k; i < len(c); i++ {
		if better(c[i], h[0]) {
			h[0], c[i] = c[i], h[0]
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, cmpCand)
}

// siftDown restores the heap property below i for a heap whose root is the worst element.
func siftDown(h []cand, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l
		if r := l + 1; r < n && better(h[w], h[r]) {
			w = r
		}
		if !better(h[i], h[w]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// topK keeps the k best candidates, sorted best first; k <= 0 keeps all (unsorted).
func topK(c []cand, k int) []cand {
	if k <= 0 || len(c) == 0 {
		return c
	}
	k = min(k, len(c))
	selectTop(c, k)
	return c[:k]
}

// isSorted reports whether c is in best-first order.
func isSorted(c []cand) bool {
	for i := 1; i < len(c); i++ {
		if better(c[i], c[i-1]) {
			return false
		}
	}
	return true
}

// softmax fills c[i].p with the softmax of the logits.
// If the best logit is +Inf, the +Inf candidates share the mass; if every logit is -Inf
// the mass goes to the first candidate.
func softmax(c []cand) {
	mx := float32(math.Inf(-1))
	for _, x := range c {
		mx = max(mx, x.logit)
	}
	if math.IsInf(float64(mx), 0) {
		var n float32
		for i := range c {
			c[i].p = 0
			if c[i].logit == mx {
				c[i].p = 1
				n++
			}
		}
		if n == 0 || mx < 0 {
			for i := range c {
				c[i].p = 0
			}
			c[0].p = 1
			return
		}
		for i := range c {
			c[i].p /= n
		}
		return
	}
	var sum float64
	for i := range c {
		e := float32(math.Exp(float64(c[i].logit - mx)))
		c[i].p = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range c {
		c[i].p *= inv
	}
}

// topP keeps the smallest best-first prefix whose probability mass reaches p (always at
// least one candidate). p <= 0 or p >= 1 keeps everything. The result is sorted best first. When
// c is not sorted yet, it grows a partial selection (256, then ×8) instead of sorting
// the whole vocabulary.
func topP(c []cand, p float32) []cand {
	if p <= 0 || p >= 1 || len(c) == 0 {
		return c
	}
	softmax(c)
	sorted := isSorted(c)
	k := len(c)
	if !sorted {
		k = min(256, len(c))
		selectTop(c, k)
	}
	var cum float32
	for i := 0; i < len(c); i++ {
		if i == k {
			k = k * 8
			if k > len(c)/4 {
				k = len(c) // a plain sort beats a big heap
			}
			selectTopFrom(c, i, k)
		}
		cum += c[i].p
		if cum >= p {
			return c[:i+1]
		}
	}
	return c
}

// selectTopFrom extends a best-first prefix c[:from] to c[:k] by selecting the best of
// c[from:].
func selectTopFrom(c []cand, from, k int) {
	selectTop(c[from:], k-from)
}

// minP keeps candidates whose probability is at least p times the best one's, i.e.
// logit >= max + ln(p); the best is always kept. Order is preserved.
func minP(c []cand, p float32) []cand {
	if p <= 0 || len(c) == 0 {
		return c
	}
	mx := float32(math.Inf(-1))
	for _, x := range c {
		mx = max(mx, x.logit)
	}
	lim := mx + float32(math.Log(float64(p)))
	out := c[:0]
	for _, x := range c {
		if x.logit >= lim {
			out = append(out, x)
		}
	}
	if len(out) == 0 { // only when every logit is -Inf
		return c[:1]
	}
	return out
}

// temperature divides the logits by t (t > 0).
func temperature(c []cand, t float32) {
	if t == 1 {
		return
	}
	for i := range c {
		c[i].logit /= t
	}
}

// draw picks one candidate with probability softmax(logit), using the seeded source.
func (s *Sampler) draw(c []cand) int32 {
	if len(c) == 1 {
		return c[0].id
	}
	softmax(c)
	u := s.rng.Float64()
	var cum float64
	last := 0
	for i := range c {
		if c[i].p == 0 {
			continue
		}
		last = i
		cum += float64(c[i].p)
		if u < cum {
			return c[i].id
		}
	}
	return c[last].id // rounding left u above the running sum
}
