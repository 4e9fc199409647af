package metrics

import (
	"math"
	"math/rand/v2"
)

// Per-request samples of a serving run are not independent: a request that queues
// behind a long one is slow too, a burst of arrivals slows a run of neighbours, the
// inter-token gaps of one request share its batch. Welch's t-test treats n such
// samples as n independent ones and calls noise "significant" far too readily. The
// moving-block bootstrap below resamples blocks of consecutive requests instead,
// which keeps the correlation inside a block, and so sizes the confidence interval
// of a difference by the samples' real variability.

// Stat is the statistic an A/B comparison of samples compares.
type Stat int

const (
	// StatMean compares means.
	StatMean Stat = iota
	// StatMedian compares medians.
	StatMedian
)

// String returns "mean" or "median".
func (s Stat) String() string {
	if s == StatMedian {
		return "median"
	}
	return "mean"
}

func (s Stat) of(x []float64) float64 {
	if s == StatMedian {
		return Median(x)
	}
	return Mean(x)
}

// BootstrapLevel is the confidence level of the bootstrap's interval (1 − CompareAlpha).
const BootstrapLevel = 1 - CompareAlpha

// Bootstrap resample counts: the mean is cheap (block sums), the median selects
// over a whole replicate.
const (
	bootstrapResamplesMean   = 2000
	bootstrapResamplesMedian = 500
)

// BlockBootstrap is the result of a moving-block bootstrap of the difference of a
// statistic between two independent sequences of samples (B − A).
type BlockBootstrap struct {
	Stat               Stat
	NA, NB             int     // samples per side
	BlockA, BlockB     int     // block length per side (consecutive samples)
	Resamples          int     // bootstrap replicates per side and block length
	Level              float64 // confidence level of the interval (0.95)
	StatA, StatB, Diff float64 // the statistic of each side and StatB − StatA
	SE                 float64 // standard error of Diff
	DF                 float64 // degrees of freedom of the interval's t quantile
	CILow, CIHigh      float64 // confidence interval of Diff at Level
	Significant        bool    // the interval excludes 0
}

// BlockBootstrapTest compares stat between the sample sequences a and b (each in
// request order) with a circular moving-block bootstrap. Each side is resampled on
// its own as ⌈n/l⌉ blocks of l consecutive samples (wrapping at the end, so every
// sample is drawn equally often), l from BlockLength. A block bootstrap sees the
// correlation only within a block, so its variance falls short of the truth by a
// term that shrinks as 1/l, and centring on the sample's own statistic takes
// another l/n: each side's variance is therefore taken at l and 2l, scaled by
// n/(n−l), and extrapolated to long blocks (2·v(2l) − v(l), never below v(2l)).
// The interval is Diff ± t·SE with t from Student's distribution on the number of
// independent blocks (Welch–Satterthwaite), so a run whose requests are strongly
// correlated, with few blocks' worth of information, gets a wide interval. The
// generator is seeded from the sample sizes: the same samples give the same
// verdict every time. With fewer than 2 samples on a side nothing can be said: the
// interval is NaN and Significant false.
func BlockBootstrapTest(a, b []float64, stat Stat, level float64) BlockBootstrap {
	r := BlockBootstrap{Stat: stat, NA: len(a), NB: len(b), Level: level,
		StatA: stat.of(a), StatB: stat.of(b), SE: math.NaN(), DF: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	r.Diff = r.StatB - r.StatA
	if len(a) < 2 || len(b) < 2 {
		return r
	}
	r.BlockA, r.BlockB = BlockLength(a), BlockLength(b)
	r.Resamples = bootstrapResamplesMean
	if stat == StatMedian {
		r.Resamples = bootstrapResamplesMedian
	}
	rng := rand.New(rand.NewPCG(0x6c6c6d62656e6368, uint64(len(a))<<32|uint64(len(b)))) // "llmbench"
	va, dfa := sideVariance(rng, a, r.BlockA, stat, r.Resamples)
	vb, dfb := sideVariance(rng, b, r.BlockB, stat, r.Resamples)
	r.SE = math.Sqrt(va + vb)
	r.DF = 1
	if va+vb > 0 {
		r.DF = max(1, (va+vb)*(va+vb)/(va*va/dfa+vb*vb/dfb))
	}
	tc := studentQuantile(1-(1-level)/2, r.DF)
	r.CILow, r.CIHigh = r.Diff-tc*r.SE, r.Diff+tc*r.SE
	r.Significant = r.CILow > 0 || r.CIHigh < 0
	return r
}

// sideVariance returns the block-bootstrap variance of stat over x, extrapolated
// from block lengths l and 2l, and its degrees of freedom (independent blocks − 1).
func sideVariance(rng *rand.Rand, x []float64, l int, stat Stat, reps int) (v, df float64) {
	n := len(x)
	l2 := max(l, min(2*l, n/2))
	at := func(l int) float64 {
		rs := newResampler(x, l, stat)
		s := make([]float64, reps)
		for i := range s {
			s[i] = rs.draw(rng)
		}
		sd := SampleStd(s)
		return sd * sd * float64(n) / float64(n-l)
	}
	v1 := at(l)
	v = v1
	if l2 > l {
		v2 := at(l2)
		v = max(v2, 2*v2-v1)
	}
	return v, max(1, float64(n/l2-1))
}

// resampler draws circular-block-bootstrap replicates of a statistic of x.
type resampler struct {
	x      []float64
	l, k   int       // block length, blocks per replicate
	sums   []float64 // sum of the block starting at each index (circular), for the mean
	stat   Stat
	buf    []float64
	scaled float64
}

func newResampler(x []float64, l int, stat Stat) *resampler {
	n := len(x)
	r := &resampler{x: x, l: l, k: (n + l - 1) / l, stat: stat}
	if stat == StatMean {
		r.sums = make([]float64, n)
		var s float64
		for i := range l {
			s += x[i%n]
		}
		for i := range n {
			r.sums[i] = s
			s += x[(i+l)%n] - x[i]
		}
		r.scaled = 1 / float64(r.k*l)
	} else {
		r.buf = make([]float64, r.k*l)
	}
	return r
}

func (r *resampler) draw(rng *rand.Rand) float64 {
	n := len(r.x)
	if r.stat == StatMean {
		var s float64
		for range r.k {
			s += r.sums[rng.IntN(n)]
		}
		return s * r.scaled
	}
	for j := range r.k {
		st := rng.IntN(n)
		blk := r.buf[j*r.l : (j+1)*r.l]
		if c := copy(blk, r.x[st:]); c < r.l {
			copy(blk[c:], r.x) // wrap around
		}
	}
	return medianInPlace(r.buf)
}

// medianInPlace returns the median of x (numpy's: the mean of the two middle values
// for an even count), reordering x: a quickselect, linear on average.
func medianInPlace(x []float64) float64 {
	n := len(x)
	k := n / 2
	hi := selectKth(x, k)
	if n%2 == 1 {
		return hi
	}
	lo := x[0] // after selectKth, x[:k] holds the k smallest
	for _, v := range x[1:k] {
		lo = max(lo, v)
	}
	return (lo + hi) / 2
}

// selectKth reorders x so that x[k] is the k-th smallest (0-based), everything
// before it no larger and everything after no smaller, and returns x[k].
func selectKth(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		// median of three as the pivot
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		p := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for x[j] > p {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}

// BlockLength returns the block length of a moving-block bootstrap of x: Politis
// and White's automatic choice (2004, with Patton, Politis and White's 2009
// correction for the circular bootstrap), which grows as n^(1/3) scaled by how far
// the samples' autocorrelation reaches, and never below ⌈n^(1/3)⌉ (the rate the
// optimum follows) nor above n/3.
func BlockLength(x []float64) int {
	n := len(x)
	if n < 4 {
		return 1
	}
	floor := int(math.Ceil(math.Cbrt(float64(n))))
	top := max(1, n/3)
	b := politisWhite(x)
	if math.IsNaN(b) || b < float64(floor) {
		b = float64(floor)
	}
	return min(top, int(math.Ceil(b)))
}

// politisWhite is the estimated optimal block length of the circular block
// bootstrap for the mean of x (NaN when x does not vary).
func politisWhite(x []float64) float64 {
	n := len(x)
	fn := float64(n)
	kn := max(5, int(math.Ceil(math.Log10(fn))))
	mmax := min(n-1, int(math.Ceil(math.Sqrt(fn)))+kn)
	m := Mean(x)
	acov := make([]float64, mmax+1)
	for k := range acov {
		var s float64
		for i := k; i < n; i++ {
			s += (x[i] - m) * (x[i-k] - m)
		}
		acov[k] = s / fn
	}
	if acov[0] == 0 {
		return math.NaN()
	}
	// m̂: the first lag after which kn autocorrelations in a row are insignificant.
	thresh := 2 * math.Sqrt(math.Log10(fn)/fn)
	mhat := mmax
	for lag := 0; lag+kn <= mmax; lag++ {
		quiet := true
		for j := 1; j <= kn; j++ {
			if math.Abs(acov[lag+j]/acov[0]) >= thresh {
				quiet = false
				break
			}
		}
		if quiet {
			mhat = lag
			break
		}
	}
	bigM := min(2*max(mhat, 1), mmax)
	flatTop := func(t float64) float64 {
		t = math.Abs(t)
		switch {
		case t <= 0.5:
			return 1
		case t <= 1:
			return 2 * (1 - t)
		}
		return 0
	}
	g, g0 := 0.0, acov[0]
	for k := 1; k <= bigM; k++ {
		w := flatTop(float64(k) / float64(bigM))
		g += 2 * w * float64(k) * acov[k]
		g0 += 2 * w * acov[k]
	}
	d := 4.0 / 3 * g0 * g0
	if d <= 0 {
		return math.NaN()
	}
	return math.Cbrt(2*g*g/d) * math.Cbrt(fn)
}
