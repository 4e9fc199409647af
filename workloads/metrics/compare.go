package metrics

import "math"

// CompareRow is one line of an A/B table: a metric's value in A and B, the difference
// of B against A in percent (positive = B larger) and, where per-request samples were
// available on both sides, Welch's test of the difference.
type CompareRow struct {
	Metric  string
	A, B    float64
	DiffPct float64
	// Test is set when both sides carried per-request samples of this metric.
	Test *Welch
}

// Verdict says in words whether the difference stands out from the noise: "noise"
// or "significant (p=…)" when samples were compared, "" when nothing can be said.
func (r CompareRow) Verdict() string {
	if r.Test == nil || math.IsNaN(r.Test.P) {
		return ""
	}
	if r.Test.Significant {
		return "significant"
	}
	return "within noise"
}

// CompareAlpha is the significance level of A/B verdicts.
const CompareAlpha = 0.05

// Compare builds an A/B row for a metric with scalar values a and b and, optionally,
// the per-request samples behind them (nil when not saved).
func Compare(metric string, a, b float64, sa, sb []float64) CompareRow {
	row := CompareRow{Metric: metric, A: a, B: b, DiffPct: math.NaN()}
	if a != 0 {
		row.DiffPct = 100 * (b - a) / math.Abs(a)
	} else if b == 0 {
		row.DiffPct = 0
	}
	if len(sa) >= 2 && len(sb) >= 2 {
		w := WelchTest(sa, sb, CompareAlpha)
		row.Test = &w
	}
	return row
}
