package sample

import "math"

// Dist writes into dst (one value per vocabulary entry, len(dst) ≥ len(logits)) the
// probability with which Sample would draw each token from logits after history:
// the same penalties, truncation and temperature, zero for the tokens they drop. Under
// greedy parameters it is one at Sample's argmax. Speculative decoding's rejection
// rule compares a target's Dist with a draft's. It consumes no randomness.
func (s *Sampler) Dist(logits []float32, history []int32, dst []float32) {
	dst = dst[:len(logits)]
	clear(dst)
	if len(logits) == 0 {
		return
	}
	c := s.load(logits)
	s.penalize(c, history)
	if s.p.Temperature <= 0 {
		dst[argmax(c)] = 1
		return
	}
	c = s.filter(c)
	temperature(c, s.p.Temperature)
	if len(c) == 1 {
		dst[c[0].id] = 1
		return
	}
	softmax(c)
	for _, x := range c {
		dst[x.id] = x.p
	}
}

// Uniform returns a number in [0, 1) from the Sampler's seeded source.
func (s *Sampler) Uniform() float64 { return s.rng.Float64() }

// DrawFrom draws a token id with probability proportional to w (non-negative weights,
// not necessarily normalised) from the Sampler's seeded source. It returns -1 when
// every weight is zero.
func (s *Sampler) DrawFrom(w []float32) int32 {
	var sum float64
	for _, v := range w {
		sum += float64(v)
	}
	if !(sum > 0) {
		return -1
	}
	u := s.rng.Float64() * sum
	var cum float64
	last := int32(-1)
	for i, v := range w {
		if v <= 0 {
			continue
		}
		last = int32(i)
		cum += float64(v)
		if u < cum {
			return int32(i)
		}
	}
	return last // rounding left u above the running sum
}

// TopProb returns the largest probability of the softmax of logits (the raw model's
// confidence in its most likely token, before any sampling stage); 0 for no logits.
// NaN logits count as -Inf.
func TopProb(logits []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, l := range logits {
		if l > mx {
			mx = l
		}
	}
	if math.IsInf(float64(mx), -1) {
		if len(logits) == 0 {
			return 0
		}
		return 1 / float32(len(logits))
	}
	var sum float64
	for _, l := range logits {
		if l == l {
			sum += math.Exp(float64(l - mx))
		}
	}
	return float32(1 / sum)
}
