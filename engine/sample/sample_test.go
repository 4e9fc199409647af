package sample

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

func cands(logits ...float32) []cand {
	c := make([]cand, len(logits))
	for i, l := range logits {
		c[i] = cand{id: int32(i), logit: l}
	}
	return c
}

func ids(c []cand) []int32 {
	out := make([]int32, len(c))
	for i, x := range c {
		out[i] = x.id
	}
	return out
}

func sortedIDs(c []cand) []int32 {
	out := ids(c)
	slices.Sort(out)
	return out
}

var inf = float32(math.Inf(1))

func TestTopK(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		k      int
		want   []int32 // in order, best first
	}{
		{"k=2", []float32{1, 5, 3, 4, 2}, 2, []int32{1, 3}},
		{"k=1", []float32{1, 5, 3, 4, 2}, 1, []int32{1}},
		{"ties lowest id first", []float32{2, 3, 3, 1, 3}, 2, []int32{1, 2}},
		{"k>n keeps all sorted", []float32{1, 3, 2}, 10, []int32{1, 2, 0}},
		{"k=n", []float32{1, 3, 2}, 3, []int32{1, 2, 0}},
		{"k=0 disabled", []float32{1, 3, 2}, 0, []int32{0, 1, 2}},
		{"negative disabled", []float32{1, 3, 2}, -1, []int32{0, 1, 2}},
		{"-inf last", []float32{-inf, 0, -1}, 3, []int32{1, 2, 0}},
		{"empty", nil, 3, []int32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(topK(cands(tt.logits...), tt.k))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("topK(%v, %d) = %v, want %v", tt.logits, tt.k, got, tt.want)
			}
		})
	}
}

// TestSelectTopLarge checks the heap selection against a full sort on a bigger input.
func TestSelectTopLarge(t *testing.T) {
	const n = 5000
	logits := make([]float32, n)
	x := uint32(12345)
	for i := range logits {
		x = x*1664525 + 1013904223
		logits[i] = float32(x>>20) / 100 // many ties
	}
	full := cands(logits...)
	slices.SortFunc(full, cmpCand)
	for _, k := range []int{1, 7, 40, 256, 1000, n} {
		got := topK(cands(logits...), k)
		if !slices.Equal(ids(got), ids(full[:k])) {
			t.Fatalf("k=%d: heap selection differs from full sort", k)
		}
	}
}

func TestTopP(t *testing.T) {
	// softmax of ln(p) is p itself, which makes the expected sets easy to read.
	ln := func(ps ...float64) []float32 {
		out := make([]float32, len(ps))
		for i, p := range ps {
			out[i] = float32(math.Log(p))
		}
		return out
	}
	tests := []struct {
		name   string
		logits []float32
		p      float32
		want   []int32
	}{
		{"mass reached at 2", ln(0.1, 0.5, 0.3, 0.1), 0.7, []int32{1, 2}},
		{"exact boundary included", ln(0.1, 0.5, 0.3, 0.1), 0.5, []int32{1}},
		{"needs three", ln(0.1, 0.5, 0.3, 0.1), 0.85, []int32{1, 2, 0}},
		{"p=0 disabled", ln(0.1, 0.5, 0.3, 0.1), 0, []int32{0, 1, 2, 3}},
		{"tiny p keeps one", ln(0.1, 0.5, 0.3, 0.1), 1e-6, []int32{1}},
		{"p=1 disabled", ln(0.1, 0.5, 0.3, 0.1), 1, []int32{0, 1, 2, 3}},
		{"p>1 disabled", ln(0.1, 0.5, 0.3, 0.1), 1.5, []int32{0, 1, 2, 3}},
		{"uniform keeps by id", ln(0.25, 0.25, 0.25, 0.25), 0.5, []int32{0, 1}},
		{"+inf wins", []float32{0, inf, 1}, 0.5, []int32{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(topP(cands(tt.logits...), tt.p))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("topP(p=%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

// TestTopPLargeVocab exercises the growing partial selection: a flat distribution over
// 10000 tokens needs far more than the first 256 candidates.
func TestTopPLargeVocab(t *testing.T) {
	const n = 10000
	logits := make([]float32, n)
	for i := range logits {
		logits[i] = float32(i%97) / 1000
	}
	got := topP(cands(logits...), 0.9)
	full := cands(logits...)
	slices.SortFunc(full, cmpCand)
	softmax(full)
	var cum float32
	want := 0
	for want < n {
		cum += full[want].p
		want++
		if cum >= 0.9 {
			break
		}
	}
	if len(got) != want || !slices.Equal(ids(got), ids(full[:want])) {
		t.Fatalf("top-p on a flat vocabulary kept %d, want %d", len(got), want)
	}
}

func TestMinP(t *testing.T) {
	ln := func(ps ...float64) []float32 {
		out := make([]float32, len(ps))
		for i, p := range ps {
			out[i] = float32(math.Log(p))
		}
		return out
	}
	tests := []struct {
		name   string
		logits []float32
		p      float32
		want   []int32 // sorted ids
	}{
		{"half of max", ln(0.1, 0.4, 0.3, 0.2), 0.5, []int32{1, 2, 3}},
		{"strict", ln(0.1, 0.4, 0.3, 0.2), 0.9, []int32{1}},
		{"p=1 keeps ties of max", ln(0.3, 0.4, 0.4), 1, []int32{1, 2}},
		{"p=0 disabled", ln(0.1, 0.4, 0.3, 0.2), 0, []int32{0, 1, 2, 3}},
		{"all -inf kept", []float32{-inf, -inf}, 0.5, []int32{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sortedIDs(minP(cands(tt.logits...), tt.p))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("minP(p=%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestPenalties(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		logits  []float32
		history []int32
		want    []float32
	}{
		{"repeat divides positive, multiplies negative",
			Params{RepeatPenalty: 2, RepeatLastN: 64},
			[]float32{4, -4, 4, 0}, []int32{0, 1, 3},
			[]float32{2, -8, 4, 0}},
		{"window only last N",
			Params{RepeatPenalty: 2, RepeatLastN: 2},
			[]float32{4, 4, 4}, []int32{0, 1, 2},
			[]float32{4, 2, 2}},
		{"frequency counts, presence once",
			Params{RepeatPenalty: 1, RepeatLastN: -1, FrequencyPenalty: 0.5, PresencePenalty: 0.25},
			[]float32{1, 1, 1}, []int32{0, 0, 0, 2},
			[]float32{1 - 1.5 - 0.25, 1, 1 - 0.5 - 0.25}},
		{"all three",
			Params{RepeatPenalty: 2, RepeatLastN: 8, FrequencyPenalty: 1, PresencePenalty: 1},
			[]float32{6, 6}, []int32{1, 1},
			[]float32{6, 3 - 2 - 1}},
		{"last_n 0 disables",
			Params{RepeatPenalty: 2, RepeatLastN: 0},
			[]float32{4, 4}, []int32{0, 1},
			[]float32{4, 4}},
		{"out-of-range history ignored",
			Params{RepeatPenalty: 2, RepeatLastN: 8},
			[]float32{4, 4}, []int32{-1, 7, 1},
			[]float32{4, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.p)
			c := s.load(tt.logits)
			s.penalize(c, tt.history)
			for i, w := range tt.want {
				if math.Abs(float64(c[i].logit-w)) > 1e-6 {
					t.Fatalf("logit[%d] = %v, want %v (all %v)", i, c[i].logit, w, c)
				}
			}
			// The count scratch must be clean for the next call.
			for i, n := range s.cnt {
				if n != 0 {
					t.Fatalf("cnt[%d] = %d left behind", i, n)
				}
			}
		})
	}
}

func TestGreedy(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name    string
		logits  []float32
		history []int32
		p       Params
		want    int32
	}{
		{"argmax", []float32{1, 3, 2}, nil, Params{}, 1},
		{"ties lowest id", []float32{1, 3, 3}, nil, Params{}, 1},
		{"NaN ignored", []float32{nan, 1, nan}, nil, Params{}, 1},
		{"all NaN", []float32{nan, nan}, nil, Params{}, 0},
		{"+inf", []float32{1, inf, 2}, nil, Params{}, 1},
		{"negative temperature is greedy", []float32{1, 3, 2}, nil, Params{Temperature: -1}, 1},
		{"penalty flips the choice", []float32{1, 3, 2}, []int32{1}, Params{RepeatPenalty: 2, RepeatLastN: 64}, 2},
		{"empty", nil, nil, Params{}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := New(tt.p).Sample(tt.logits, tt.history); got != tt.want {
				t.Fatalf("Sample = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSampleSadPaths(t *testing.T) {
	nan := float32(math.NaN())
	p := Params{Temperature: 1, TopK: 10, TopP: 0.9, MinP: 0.1, Seed: 1}
	tests := []struct {
		name   string
		logits []float32
		allow  []int32
	}{
		{"empty", nil, []int32{-1}},
		{"single", []float32{0.5}, []int32{0}},
		{"NaN never drawn", []float32{nan, 0, nan, 0}, []int32{1, 3}},
		{"all NaN", []float32{nan, nan, nan}, []int32{0}},
		{"all -inf", []float32{-inf, -inf}, []int32{0}},
		{"+inf always drawn", []float32{0, inf, 5}, []int32{1}},
		{"k > n", []float32{0, 0}, []int32{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(p)
			for range 200 {
				got := s.Sample(tt.logits, nil)
				if !slices.Contains(tt.allow, got) {
					t.Fatalf("Sample = %d, want one of %v", got, tt.allow)
				}
			}
		})
	}
	// A tiny p keeps only the best token, whatever the temperature; p = 0 is "off".
	s := New(Params{Temperature: 5, TopP: 1e-6, Seed: 3})
	for range 100 {
		if got := s.Sample([]float32{1, 2, 1.9}, nil); got != 1 {
			t.Fatalf("top_p=1e-6 drew %d, want 1", got)
		}
	}
	s = New(Params{Temperature: 5, TopP: 0, Seed: 3})
	drawn := map[int32]bool{}
	for range 100 {
		drawn[s.Sample([]float32{1, 2, 1.9}, nil)] = true
	}
	if len(drawn) != 3 {
		t.Fatalf("top_p=0 should be disabled; drew only %v", drawn)
	}
}

// TestFrequencies checks that with no truncation the draws follow softmax(logits/T): every
// token's frequency must be within 5 standard errors of its probability (the seed is
// fixed, so the test is deterministic).
func TestFrequencies(t *testing.T) {
	logits := []float32{1.0, 2.0, 0.5, -1.0, 1.5, 0.0, 3.0, -0.5}
	for _, temp := range []float32{0.5, 1.0, 1.7} {
		const n = 200000
		s := New(Params{Temperature: temp, TopP: 1, Seed: 42})
		counts := make([]int, len(logits))
		for range n {
			counts[s.Sample(logits, nil)]++
		}
		c := cands(logits...)
		temperature(c, temp)
		softmax(c)
		for i, x := range c {
			p := float64(x.p)
			f := float64(counts[i]) / n
			se := math.Sqrt(p * (1 - p) / n)
			if math.Abs(f-p) > 5*se+1e-4 {
				t.Errorf("T=%v token %d: frequency %.5f, softmax %.5f (±%.5f)", temp, i, f, p, 5*se)
			}
		}
	}
}

// TestChainOrder checks that top-p looks at the untempered distribution, as llama.cpp's
// chain applies temperature after the filters.
func TestChainOrder(t *testing.T) {
	// Untempered: p ≈ {0.665, 0.245, 0.090}; top-p 0.6 keeps only token 0 whatever the
	// temperature, even a very high one that would flatten the distribution.
	logits := []float32{2, 1, 0}
	s := New(Params{Temperature: 100, TopP: 0.6, Seed: 9})
	for range 200 {
		if got := s.Sample(logits, nil); got != 0 {
			t.Fatalf("drew %d; top-p must run before temperature", got)
		}
	}
	// top-k 2 then min-p 0.5 of the untempered best (0.665 → 0.33): keeps {0}.
	s = New(Params{Temperature: 100, TopK: 2, MinP: 0.5, TopP: 1, Seed: 9})
	for range 200 {
		if got := s.Sample(logits, nil); got != 0 {
			t.Fatalf("drew %d; min-p must run before temperature", got)
		}
	}
}

func TestDeterministic(t *testing.T) {
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i))) * 3
	}
	run := func(seed uint64) []int32 {
		s := New(Params{Temperature: 0.9, TopK: 50, TopP: 0.95, MinP: 0.02, Seed: seed})
		var out []int32
		for range 100 {
			out = append(out, s.Sample(logits, out))
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different sequences")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same sequence")
	}
	s := New(Params{Temperature: 0.9, TopK: 50, TopP: 0.95, MinP: 0.02, Seed: 7})
	var first []int32
	for range 10 {
		first = append(first, s.Sample(logits, first))
	}
	s.Reseed(7)
	var again []int32
	for range 10 {
		again = append(again, s.Sample(logits, again))
	}
	if !slices.Equal(first, again) {
		t.Fatal("Reseed did not restart the sequence")
	}
}

func TestNoAllocs(t *testing.T) {
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i)*0.37)) * 4
	}
	hist := []int32{1, 2, 3, 4, 5, 1, 2, 3}
	for _, p := range []Params{
		{},
		DefaultParams(),
		{Temperature: 1, TopP: 0.9, RepeatPenalty: 1.1, RepeatLastN: 64, FrequencyPenalty: 0.1, PresencePenalty: 0.1},
	} {
		s := New(p)
		s.Sample(logits, hist)
		if n := testing.AllocsPerRun(20, func() { s.Sample(logits, hist) }); n != 0 {
			t.Errorf("%+v: %v allocations per Sample", p, n)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{
		{Temperature: float32(math.NaN())},
		{TopP: -0.1},
		{MinP: 1.5},
		{RepeatPenalty: -1},
		{FrequencyPenalty: float32(math.Inf(1))},
	} {
		if p.Validate() == nil {
			t.Errorf("%+v: want an error", p)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	for _, n := range []int{32000, 151936} {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(math.Sin(float64(i)*0.37)) * 4
		}
		for _, tc := range []struct {
			name string
			p    Params
		}{
			{"greedy", Params{}},
			{"default", DefaultParams()},
			{"top-p-only", Params{Temperature: 1, TopP: 0.9}},
		} {
			b.Run(tc.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				s := New(tc.p)
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					s.Sample(logits, nil)
				}
			})
		}
	}
}
