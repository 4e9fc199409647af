// Package metrics computes the statistics llmbench reports: summary statistics over raw
// samples (numpy's definitions, as vLLM uses them), and A/B comparisons with a noise
// verdict. Final figures always come from raw samples; histograms feed live views only.
package metrics

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Mean returns the arithmetic mean (NaN for no samples).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Std returns the population standard deviation (numpy's np.std, ddof=0), as vLLM
// reports it (NaN for no samples).
func Std(x []float64) float64 { return stdDDOF(x, 0) }

// SampleStd returns the sample standard deviation (ddof=1), as llama-bench reports
// "± std" over repetitions; 0 for a single sample, NaN for none.
func SampleStd(x []float64) float64 {
	if len(x) == 1 {
		return 0
	}
	return stdDDOF(x, 1)
}

func stdDDOF(x []float64, ddof int) float64 {
	if len(x)-ddof <= 0 {
		return math.NaN()
	}
	m := Mean(x)
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-ddof))
}

// Percentile returns the p-th percentile (0..100) of x with linear interpolation
// between closest ranks (numpy's default method). x need not be sorted and is not
// modified. NaN for no samples.
func Percentile(x []float64, p float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return PercentileSorted(s, p)
}

// PercentileSorted is Percentile for already sorted samples.
func PercentileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	p = math.Max(0, math.Min(100, p))
	pos := p / 100 * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	frac := pos - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// Median returns the 50th percentile.
func Median(x []float64) float64 { return Percentile(x, 50) }

// Welch is the result of Welch's unequal-variances t-test of B against A.
type Welch struct {
	MeanA, MeanB float64
	Diff         float64 // MeanB − MeanA
	DiffPct      float64 // Diff as a percentage of MeanA
	T, DF, P     float64 // t statistic, Welch–Satterthwaite degrees of freedom, two-sided p
	CILow        float64 // confidence interval of Diff at 1 − alpha
	CIHigh       float64
	Significant  bool // P < alpha; false when either side has fewer than 2 samples
}

// WelchTest compares the means of two sample sets with Welch's t-test at level alpha
// (e.g. 0.05). With fewer than two samples on a side nothing can be said: P is NaN and
// Significant false.
func WelchTest(a, b []float64, alpha float64) Welch {
	w := Welch{MeanA: Mean(a), MeanB: Mean(b), P: math.NaN(), T: math.NaN(), DF: math.NaN(),
		CILow: math.NaN(), CIHigh: math.NaN()}
	w.Diff = w.MeanB - w.MeanA
	w.DiffPct = 100 * w.Diff / w.MeanA
	if len(a) < 2 || len(b) < 2 {
		return w
	}
	va, vb := math.Pow(SampleStd(a), 2)/float64(len(a)), math.Pow(SampleStd(b), 2)/float64(len(b))
	se := math.Sqrt(va + vb)
	if se == 0 {
		w.T, w.DF, w.CILow, w.CIHigh = 0, float64(len(a)+len(b)-2), w.Diff, w.Diff
		w.P = 1
		if w.Diff != 0 {
			w.T, w.P = math.Copysign(math.Inf(1), w.Diff), 0
		}
		w.Significant = w.P < alpha
		return w
	}
	w.T = w.Diff / se
	w.DF = (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	w.P = studentTwoSided(math.Abs(w.T), w.DF)
	tc := studentQuantile(1-alpha/2, w.DF)
	w.CILow, w.CIHigh = w.Diff-tc*se, w.Diff+tc*se
	w.Significant = w.P < alpha
	return w
}

// studentT is Student's t with df degrees of freedom. gonum's distuv evaluates it
// through mathext's regularised incomplete beta and its inverse (Cephes' incbet and
// incbi), which are kept and tested upstream; the quantile is an inversion, not a search.
func studentT(df float64) distuv.StudentsT { return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df} }

// studentTwoSided returns P(|T| ≥ t) for Student's t with df degrees of freedom
// (twice the upper tail, I_{df/(df+t²)}(df/2, 1/2), with no 1 − CDF cancellation).
func studentTwoSided(t, df float64) float64 {
	return 2 * studentT(df).Survival(math.Abs(t))
}

// studentQuantile returns the q-quantile of Student's t with df degrees of freedom.
func studentQuantile(q, df float64) float64 {
	return studentT(df).Quantile(q)
}
