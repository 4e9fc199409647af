package metrics

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestSummary(t *testing.T) {
	x := []float64{15, 20, 35, 40, 50}
	// Values from numpy: np.mean, np.std (ddof 0), np.std(ddof=1), np.percentile.
	cases := []struct {
		name      string
		got, want float64
	}{
		{"mean", Mean(x), 32},
		{"std", Std(x), 12.884098726725126},
		{"sample std", SampleStd(x), 14.404860290887934},
		{"p0", Percentile(x, 0), 15},
		{"p50", Median(x), 35},
		{"p90", Percentile(x, 90), 46},
		{"p99", Percentile(x, 99), 49.6},
		{"p100", Percentile(x, 100), 50},
		{"p25 of 4", Percentile([]float64{4, 1, 3, 2}, 25), 1.75},
		{"single std", SampleStd([]float64{3}), 0},
	}
	for _, c := range cases {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if x[0] != 15 || x[4] != 50 {
		t.Error("Percentile modified its input")
	}
	for _, v := range []float64{Mean(nil), Std(nil), Percentile(nil, 50), SampleStd(nil)} {
		if !math.IsNaN(v) {
			t.Errorf("empty input gave %v, want NaN", v)
		}
	}
}

func TestWelch(t *testing.T) {
	// Welch by hand: t = 3.14 / sqrt(1.449/10 + 21.4721/10) = 2.07401, df = 10.2092;
	// p from numerically integrating Student's t density: 0.0642800.
	a := []float64{19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0}
	b := []float64{28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7}
	w := WelchTest(a, b, 0.05)
	if !near(w.T, 2.07401, 1e-5) || !near(w.DF, 10.2092, 1e-5) || !near(w.P, 0.0642800, 1e-6) || w.Significant {
		t.Errorf("welch = %+v", w)
	}
	// Identical samples: no difference.
	same := WelchTest(a, a, 0.05)
	if same.Significant || !near(same.P, 1, 1e-9) {
		t.Errorf("self comparison = %+v", same)
	}
	// Clearly separated samples.
	far := WelchTest([]float64{10, 10.1, 9.9, 10.05}, []float64{20, 20.2, 19.8, 20.1}, 0.05)
	if !far.Significant || far.P > 1e-6 || far.CILow > 10 || far.CIHigh < 10 {
		t.Errorf("far = %+v", far)
	}
	// Constant but different.
	if c := WelchTest([]float64{5, 5}, []float64{6, 6}, 0.05); !c.Significant {
		t.Errorf("constant different = %+v", c)
	}
	if c := WelchTest([]float64{5}, []float64{6, 6}, 0.05); c.Significant || !math.IsNaN(c.P) {
		t.Errorf("one sample = %+v", c)
	}
}

func TestStudentQuantile(t *testing.T) {
	// Quantiles from the standard t tables (R's qt to 7 significant figures).
	for _, c := range []struct{ q, df, want float64 }{
		{0.975, 1, 12.70620}, {0.975, 2, 4.302653}, {0.975, 5, 2.570582}, {0.975, 10, 2.228139},
		{0.975, 30, 2.042272}, {0.975, 1000, 1.962339}, {0.995, 5, 4.032143}, {0.95, 2, 2.919986},
		{0.90, 30, 1.310415},
	} {
		if got := studentQuantile(c.q, c.df); !near(got, c.want, 1e-6) {
			t.Errorf("q %v df %v: %v, want %v", c.q, c.df, got, c.want)
		}
		// The two-sided tail beyond the (1 − α/2)-quantile is α.
		if p := studentTwoSided(c.want, c.df); !near(p, 2*(1-c.q), 1e-5*2*(1-c.q)) {
			t.Errorf("P(|T| ≥ %v; df %v) = %v, want %v", c.want, c.df, p, 2*(1-c.q))
		}
	}
	// Closed forms: df 1 is Cauchy (P(|T| ≥ 1) = 1/2); df 2 has
	// P(|T| ≥ t) = 1 − t/√(2 + t²), so P(|T| ≥ √2) = 1 − 1/√2.
	if p := studentTwoSided(1, 1); !near(p, 0.5, 1e-12) {
		t.Errorf("Cauchy P(|T| ≥ 1) = %v", p)
	}
	if p := studentTwoSided(-math.Sqrt2, 2); !near(p, 1-1/math.Sqrt2, 1e-12) {
		t.Errorf("df 2 P(|T| ≥ √2) = %v", p)
	}
}
