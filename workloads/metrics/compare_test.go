package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 returns n samples of an AR(1) process around mean with autocorrelation phi and
// a marginal standard deviation of sd: a latency that drifts with the server's load,
// as consecutive requests do (they share queues and batches).
func ar1(rng *rand.Rand, n int, mean, sd, phi float64) []float64 {
	out := make([]float64, n)
	e := rng.NormFloat64() * sd
	inn := sd * math.Sqrt(1-phi*phi)
	for i := range out {
		e = phi*e + inn*rng.NormFloat64()
		out[i] = mean + e
	}
	return out
}

// bursts returns n samples that sit at mean most of the time and at 1.5× mean through
// bursts of 20–60 consecutive requests (a queue that builds and drains), with 5 %
// jitter: heavy, clustered tails.
func bursts(rng *rand.Rand, n int, mean float64) []float64 {
	out := make([]float64, n)
	for i := 0; i < n; {
		level := mean
		run := 20 + rng.IntN(80)
		if rng.Float64() < 0.3 {
			level, run = 1.5*mean, 20+rng.IntN(40)
		}
		for j := 0; j < run && i < n; j, i = j+1, i+1 {
			out[i] = level * (1 + 0.05*rng.NormFloat64())
		}
	}
	return out
}

// verdicts runs Compare on pairs pairs of seeded synthetic sequences (B scaled by
// 1+shift) and counts the verdicts.
func verdicts(pairs int, gen func(rng *rand.Rand) []float64, shift float64) (noise, significant int) {
	for p := range pairs {
		rng := rand.New(rand.NewPCG(uint64(p)+1, 0x5eed))
		a := gen(rng)
		b := gen(rng)
		for i := range b {
			b[i] *= 1 + shift
		}
		switch Compare("mean_ttft_ms", Mean(a), Mean(b), a, b).Verdict() {
		case "within noise":
			noise++
		case "significant":
			significant++
		}
	}
	return noise, significant
}

// TestCompareAutocorrelated is the A/B verdict's regression test: on correlated
// per-request samples (AR(1) with φ = 0.9, and bursts), 20 A/A pairs must say
// "within noise" at least 18 times, and 20 A/B pairs with B 10 % larger must say
// "significant" at least 18 times. Welch's t-test on the pooled samples calls most
// A/A pairs significant.
func TestCompareAutocorrelated(t *testing.T) {
	gens := []struct {
		name string
		gen  func(rng *rand.Rand) []float64
	}{
		{"AR(1) phi=0.9, 1000 requests", func(rng *rand.Rand) []float64 { return ar1(rng, 1000, 100, 10, 0.9) }},
		{"AR(1) phi=0.9, 300 requests", func(rng *rand.Rand) []float64 { return ar1(rng, 300, 100, 5, 0.9) }},
		{"bursts, 10000 requests", func(rng *rand.Rand) []float64 { return bursts(rng, 10000, 100) }},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			noise, sig := verdicts(20, g.gen, 0)
			if noise < 18 {
				t.Errorf("A/A: %d of 20 pairs within noise (%d significant), want at least 18", noise, sig)
			}
			_, sig = verdicts(20, g.gen, 0.10)
			if sig < 18 {
				t.Errorf("A/B with a 10%% shift: %d of 20 pairs significant, want at least 18", sig)
			}
		})
	}
}

// TestCompareRequestsMedian checks the bootstrap of medians the same way on AR(1)
// samples.
func TestCompareRequestsMedian(t *testing.T) {
	var noise, sig int
	for p := range 20 {
		rng := rand.New(rand.NewPCG(uint64(p)+100, 7))
		a, b := ar1(rng, 1000, 100, 10, 0.9), ar1(rng, 1000, 100, 10, 0.9)
		if CompareRequests("p50", Median(a), Median(b), a, b, StatMedian).Verdict() == "within noise" {
			noise++
		}
		for i := range b {
			b[i] *= 1.1
		}
		r := CompareRequests("p50", Median(a), Median(b), a, b, StatMedian)
		if r.Verdict() == "significant" {
			sig++
		}
		if r.Test.Method != MethodBootstrap || r.Test.Stat != StatMedian || r.Test.Describe() != "moving-block bootstrap, 95 % CI" {
			t.Fatalf("test %+v %q", r.Test, r.Test.Describe())
		}
	}
	if noise < 18 || sig < 18 {
		t.Errorf("median: A/A %d/20 within noise, A/B %d/20 significant; want ≥ 18 each", noise, sig)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := ar1(rng, 500, 50, 5, 0.8), ar1(rng, 400, 51, 5, 0.8)
	x, y := BlockBootstrapTest(a, b, StatMean, 0.95), BlockBootstrapTest(a, b, StatMean, 0.95)
	if x != y {
		t.Errorf("same samples, different results:\n%+v\n%+v", x, y)
	}
	if !(x.CILow < x.Diff && x.Diff < x.CIHigh) {
		t.Errorf("interval %v..%v does not hold the difference %v", x.CILow, x.CIHigh, x.Diff)
	}
}

func TestBlockLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	iid := make([]float64, 1000)
	for i := range iid {
		iid[i] = rng.NormFloat64()
	}
	if l := BlockLength(iid); l != 10 { // ⌈1000^(1/3)⌉: no correlation to cover
		t.Errorf("independent samples: block %d, want 10", l)
	}
	if l := BlockLength(ar1(rng, 1000, 0, 1, 0.9)); l < 25 || l > 150 {
		t.Errorf("AR(1) phi=0.9: block %d, want the correlation's reach (25..150)", l)
	}
	if l := BlockLength([]float64{1, 1, 1, 1, 1, 1, 1, 1, 1}); l != 3 {
		t.Errorf("constant samples: block %d, want 3", l)
	}
}

func TestCompareRepeats(t *testing.T) {
	a := []float64{100, 101, 99, 100.5, 99.5}
	b := []float64{110, 111, 109, 110.5, 109.5}
	r := CompareRepeats("t/s", Mean(a), Mean(b), a, b)
	if r.Verdict() != "significant" || r.Test.Method != MethodWelchRepeats || r.Test.Describe() != "Welch t over 5 repetitions" {
		t.Errorf("%+v %q %q", r.Test, r.Verdict(), r.Test.Describe())
	}
	if r := CompareRepeats("t/s", 1, 1, a, a); r.Verdict() != "within noise" {
		t.Errorf("same repetitions: %q", r.Verdict())
	}
	if r := CompareRepeats("t/s", 1, 1, a[:1], a); r.Verdict() != "" {
		t.Errorf("one repetition: %q", r.Verdict())
	}
}

func TestMedianInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n < 60; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(10)) // ties
		}
		want := Median(x)
		if got := medianInPlace(x); got != want {
			t.Fatalf("n=%d: %v, want %v", n, got, want)
		}
	}
}
