package sample

import (
	"math"
	"testing"
)

// TestDistIsWhatSampleDraws checks Dist against Sample's own draws: one-hot at the
// argmax under greedy parameters, zero where truncation drops a token, and within a
// few standard errors of the empirical frequencies of 20000 seeded draws otherwise.
func TestDistIsWhatSampleDraws(t *testing.T) {
	logits := []float32{1, 2.5, 0.3, 2.4, -1, 1.7, 0.9, 2}
	hist := []int32{1, 1, 3}
	cases := []struct {
		name string
		p    Params
		zero []int // tokens the stages must drop
	}{
		{"greedy", Params{}, []int{0, 2, 3, 4, 5, 6, 7}},
		{"greedy+penalty", Params{RepeatPenalty: 1.5, RepeatLastN: 8}, []int{0, 1, 2, 3, 4, 5, 6}},
		{"temperature", Params{Temperature: 0.7}, nil},
		{"top-k", Params{Temperature: 1, TopK: 3}, []int{0, 2, 4, 5, 6}},
		{"default", DefaultParams(), []int{4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.p)
			d := make([]float32, len(logits))
			s.Dist(logits, hist, d)
			var sum float64
			for _, v := range d {
				sum += float64(v)
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Fatalf("Dist sums to %g: %v", sum, d)
			}
			for _, z := range c.zero {
				if d[z] != 0 {
					t.Errorf("token %d: probability %g, want 0 (dropped)", z, d[z])
				}
			}
			const n = 20000
			count := make([]int, len(logits))
			for i := range n {
				s.Reseed(uint64(i))
				count[s.Sample(logits, hist)]++
			}
			for id, p := range d {
				got := float64(count[id]) / n
				se := math.Sqrt(float64(p)*(1-float64(p))/n) + 1e-9
				if math.Abs(got-float64(p)) > 5*se {
					t.Errorf("token %d: drawn %.4f of the time, Dist says %.4f", id, got, p)
				}
			}
		})
	}
}

func TestDrawFromAndTopProb(t *testing.T) {
	s := New(Params{Seed: 3})
	if got := s.DrawFrom([]float32{0, 0}); got != -1 {
		t.Errorf("DrawFrom(all zero) = %d, want -1", got)
	}
	w := []float32{0, 3, 0, 1}
	count := make([]int, len(w))
	const n = 20000
	for range n {
		count[s.DrawFrom(w)]++
	}
	if count[0] != 0 || count[2] != 0 {
		t.Errorf("zero weights drawn: %v", count)
	}
	if f := float64(count[1]) / n; math.Abs(f-0.75) > 0.015 {
		t.Errorf("weight 3 of 4 drawn %.3f of the time", f)
	}
	if got := TopProb([]float32{0, 0, 0, 0}); math.Abs(float64(got)-0.25) > 1e-6 {
		t.Errorf("TopProb(uniform of 4) = %g", got)
	}
	if got := TopProb([]float32{float32(math.Log(3)), 0}); math.Abs(float64(got)-0.75) > 1e-6 {
		t.Errorf("TopProb(3:1) = %g", got)
	}
	if got := TopProb(nil); got != 0 {
		t.Errorf("TopProb(nil) = %g", got)
	}
}
