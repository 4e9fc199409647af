package metrics

import (
	"fmt"
	"math"
)

// CompareRow is one line of an A/B table: a metric's value in A and B, the difference
// of B against A in percent (positive = B larger) and, where samples were available
// on both sides, the test of the difference.
type CompareRow struct {
	Metric  string
	A, B    float64
	DiffPct float64
	// Test is set when both sides carried samples of this metric.
	Test *Test
}

// Verdict says in words whether the difference stands out from the noise:
// "significant" or "within noise" when samples were compared, "" when nothing can
// be said.
func (r CompareRow) Verdict() string {
	if r.Test == nil || !r.Test.Decided() {
		return ""
	}
	if r.Test.Significant {
		return "significant"
	}
	return "within noise"
}

// CompareAlpha is the significance level of A/B verdicts.
const CompareAlpha = 0.05

// Method names how an A/B verdict was reached.
type Method string

const (
	// MethodBootstrap is the moving-block bootstrap over the request sequence, for
	// per-request samples (correlated: neighbours share a queue and a batch).
	MethodBootstrap Method = "moving-block bootstrap"
	// MethodWelchRepeats is Welch's t-test over run-level figures of repetitions
	// (llama-bench's -r), which are independent of one another.
	MethodWelchRepeats Method = "Welch t"
)

// Test is the noise test behind a verdict: which method, on what, and its
// confidence interval of the difference B − A.
type Test struct {
	Method Method
	Stat   Stat // the statistic compared (the mean for Welch)
	NA, NB int  // samples (requests, or repetitions) per side
	// Block is the bootstrap's block length per side (0 for Welch).
	BlockA, BlockB int
	// Diff is the statistic of B minus that of A; CILow..CIHigh its confidence
	// interval at 1 − CompareAlpha (NaN when it cannot be computed).
	Diff, CILow, CIHigh float64
	// P is Welch's two-sided p-value (NaN for the bootstrap, which gives an interval).
	P           float64
	Significant bool
}

// Decided reports whether the test could say anything (enough samples on each side).
func (t *Test) Decided() bool { return !math.IsNaN(t.CILow) && !math.IsNaN(t.CIHigh) }

// Describe names the method as a table's footnote or column says it: "moving-block
// bootstrap, 95 % CI" or "Welch t over 5 repetitions".
func (t *Test) Describe() string {
	if t.Method == MethodWelchRepeats {
		return DescribeWelch(t.NA, t.NB)
	}
	return DescribeBootstrap()
}

// DescribeBootstrap is the bootstrap's name in tables: "moving-block bootstrap, 95 % CI".
func DescribeBootstrap() string {
	return fmt.Sprintf("%s, %.0f %% CI", MethodBootstrap, 100*(1-CompareAlpha))
}

// DescribeWelch is the repetitions test's name in tables: "Welch t over 5
// repetitions" ("over 3/5 repetitions" when the sides differ).
func DescribeWelch(na, nb int) string {
	if na == nb {
		return fmt.Sprintf("%s over %d repetitions", MethodWelchRepeats, na)
	}
	return fmt.Sprintf("%s over %d/%d repetitions", MethodWelchRepeats, na, nb)
}

// Compare builds an A/B row for a metric with scalar values a and b (its means)
// and, optionally, the per-request samples behind them in request order (nil when
// not saved): the verdict is a moving-block bootstrap of the difference of means.
func Compare(metric string, a, b float64, sa, sb []float64) CompareRow {
	return CompareRequests(metric, a, b, sa, sb, StatMean)
}

// CompareRequests is Compare for a chosen statistic of the per-request samples
// (StatMedian for a median or P50 row).
func CompareRequests(metric string, a, b float64, sa, sb []float64, stat Stat) CompareRow {
	row := newRow(metric, a, b)
	if len(sa) >= 2 && len(sb) >= 2 {
		bs := BlockBootstrapTest(sa, sb, stat, BootstrapLevel)
		row.Test = &Test{Method: MethodBootstrap, Stat: stat, NA: bs.NA, NB: bs.NB, BlockA: bs.BlockA, BlockB: bs.BlockB,
			Diff: bs.Diff, CILow: bs.CILow, CIHigh: bs.CIHigh, P: math.NaN(), Significant: bs.Significant}
	}
	return row
}

// CompareRepeats builds an A/B row from run-level figures of independent
// repetitions (one value per repetition, such as llama-bench's per-repetition t/s):
// Welch's t-test over the repetitions.
func CompareRepeats(metric string, a, b float64, ra, rb []float64) CompareRow {
	row := newRow(metric, a, b)
	if len(ra) >= 2 && len(rb) >= 2 {
		w := WelchTest(ra, rb, CompareAlpha)
		row.Test = &Test{Method: MethodWelchRepeats, Stat: StatMean, NA: len(ra), NB: len(rb),
			Diff: w.Diff, CILow: w.CILow, CIHigh: w.CIHigh, P: w.P, Significant: w.Significant}
	}
	return row
}

func newRow(metric string, a, b float64) CompareRow {
	row := CompareRow{Metric: metric, A: a, B: b, DiffPct: math.NaN()}
	if a != 0 {
		row.DiffPct = 100 * (b - a) / math.Abs(a)
	} else if b == 0 {
		row.DiffPct = 0
	}
	return row
}
