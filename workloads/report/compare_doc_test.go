package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

func TestSummarize(t *testing.T) {
	part := servingDoc()
	part.Partial = true
	for _, tc := range []struct {
		name string
		doc  result.Document
		want result.Summary
	}{
		{"bench", benchDoc(), result.Summary{Kind: "bench", Model: "m", Workload: "pp512 tg128 pp512 tg128 ×3",
			Headline: "pp512 515.4 t/s · tg128 128.9 t/s · pp512 1030.9 t/s · tg128 257.7 t/s"}}, // mean of 512/1, 512/1.1, 512/0.9
		{"sweep", part, result.Summary{Kind: "serve-bench", Model: "org/m", Workload: "random ×4 c=4,8", Headline: "peak 3.0 out tok/s at c=4", Partial: true}}, // 6 tokens in 2 s,
		{"one point", result.Document{Serving: []*serving.Result{sampleResult()}}, result.Summary{Kind: "serve-bench", Model: "org/m",
			Workload: "random ×4 c=4", Headline: "3.0 out tok/s · TTFT mean 116.7 ms"}},
		{"empty", result.Document{}, result.Summary{Kind: "?", Headline: "no result"}},
	} {
		got := result.Summarize(tc.doc)
		got.Title, got.Started = "", got.Started.UTC().Truncate(0)
		tc.want.Started = tc.doc.Started
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestCompareDocs(t *testing.T) {
	if _, err := CompareDocs([]result.Document{benchDoc()}); err == nil {
		t.Error("one run compared")
	}
	if _, err := CompareDocs([]result.Document{{}, {}}); err == nil {
		t.Error("two empty runs compared")
	}
	a, b := benchDoc(), benchDoc()
	for i := range b.Bench.Records { // B: twice as slow, with the same spread
		for j := range b.Bench.Records[i].SamplesNs {
			b.Bench.Records[i].SamplesNs[j] *= 2
		}
	}
	c, err := CompareDocs([]result.Document{a, b, a})
	if err != nil {
		t.Fatal(err)
	}
	labels := []string{}
	for _, r := range c.Rows {
		labels = append(labels, r.Label())
		if d := r.DiffPct[1]; math.Abs(d+50) > 1e-9 {
			t.Errorf("%s: B %+.3f %%, want −50 %%", r.Label(), d)
		}
		if r.Verdict[1] != VerdictSignificant || r.Verdict[2] != VerdictNoise || r.DiffPct[2] != 0 {
			t.Errorf("%s: verdicts %q, diffs %v", r.Label(), r.Verdict, r.DiffPct)
		}
	}
	want := []string{"pp512 t=1 t/s", "tg128 t=1 t/s", "pp512 t=2 t/s", "tg128 t=2 t/s"} // only the settings that differ
	if !slices.Equal(labels, want) {
		t.Errorf("rows %q, want %q", labels, want)
	}

	// A bench run against a serving run: every metric is missing on one side.
	mixed, err := CompareDocs([]result.Document{benchDoc(), {Serving: []*serving.Result{sampleResult()}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mixed.Rows {
		if !math.IsNaN(r.Values[0]) == !math.IsNaN(r.Values[1]) || !math.IsNaN(r.DiffPct[1]) || r.Verdict[1] != VerdictNA {
			t.Errorf("%s: values %v diff %v verdict %q", r.Label(), r.Values, r.DiffPct, r.Verdict)
		}
	}
}

// TestCompareDocsServing: the serving rows hold vLLM's figures, means carry the
// per-request samples (so get a verdict), percentiles do not; a sweep's rows are
// grouped by concurrency.
func TestCompareDocsServing(t *testing.T) {
	a := result.Document{Serving: []*serving.Result{sampleResult()}}
	c, err := CompareDocs([]result.Document{a, a})
	if err != nil {
		t.Fatal(err)
	}
	s := a.Serving[0].Summary
	byName := map[string]DocRow{}
	for _, r := range c.Rows {
		byName[r.Metric] = r
	}
	for name, want := range map[string]float64{
		"Output tok/s": s.OutputThroughput, "Mean TTFT (ms)": s.TTFT.Mean, "P50 TTFT (ms)": s.TTFT.Median,
		"Mean TPOT (ms)": s.TPOT.Mean, "Mean ITL (ms)": s.ITL.Mean, "Mean E2EL (ms)": s.E2EL.Mean, "Failed requests": 1,
	} {
		r, ok := byName[name]
		if !ok || math.Abs(r.Values[0]-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, r.Values, want)
		}
	}
	if v := byName["Mean TTFT (ms)"].Verdict[1]; v != VerdictNoise {
		t.Errorf("same samples: verdict %q", v)
	}
	if v := byName["P99 TTFT (ms)"].Verdict[1]; v != VerdictNA {
		t.Errorf("percentile verdict %q", v)
	}
	if got := RequestSamples(a.Serving[0].Records)["itl"]; !slices.Equal(got, []float64{10, 20, 30}) {
		t.Errorf("itl samples %v", got)
	}
	sw, err := CompareDocs([]result.Document{servingDoc(), servingDoc()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sw.Rows[0].Label(), "c=4 ") || !slices.ContainsFunc(sw.Rows, func(r DocRow) bool { return strings.HasPrefix(r.Label(), "c=8 ") }) {
		t.Errorf("sweep rows not grouped: %q", sw.Rows[0].Label())
	}
}

// rowsOf returns the comparison's rows by label.
func rowsOf(t *testing.T, docs ...result.Document) map[string]DocRow {
	t.Helper()
	c, err := CompareDocs(docs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]DocRow{}
	for _, r := range c.Rows {
		out[r.Label()] = r
	}
	return out
}

// TestCompareMatchesWhatIsMeasured (issue 14 item 8): a power sweep's pp512 and a
// bench's pp512 are the same test (they were "pp512 t=2 fa=0 b=2048 t/s" against
// "pp512 t/s": no metric in common); the bench's one figure is compared with each
// limit of the sweep. A serve sweep is compared point by point: a run at c=4 meets
// the sweep's c=4 point, not its c=8 one; two single runs meet whatever their
// concurrency.
func TestCompareMatchesWhatIsMeasured(t *testing.T) {
	bench := benchDoc()
	bench.Bench.Records = bench.Bench.Records[:2] // pp512, tg128 at t=1
	sweep := benchDoc()
	sweep.Bench.Records = append(sweep.Bench.Records[:0:0], bench.Bench.Records[0], bench.Bench.Records[0])
	sweep.Bench.Records[0].PowerLimitW, sweep.Bench.Records[1].PowerLimitW = 300, 200
	sweep.Bench.Records[1].SamplesNs = slices.Clone(sweep.Bench.Records[1].SamplesNs)
	for j := range sweep.Bench.Records[1].SamplesNs {
		sweep.Bench.Records[1].SamplesNs[j] *= 2
	}
	for _, order := range [][]result.Document{{sweep, bench}, {bench, sweep}} {
		rows := rowsOf(t, order...)
		for _, l := range []string{"pp512 300 W t/s", "pp512 200 W t/s"} {
			r, ok := rows[l]
			if !ok || math.IsNaN(r.Values[0]) || math.IsNaN(r.Values[1]) || r.Verdict[1] == VerdictNA {
				t.Errorf("%q: %+v (rows %v)", l, r, keysOf(rows))
			}
		}
		if _, ok := rows["pp512 t/s"]; ok {
			t.Errorf("the bench's pp512 is a row of its own besides the sweep's: %v", keysOf(rows))
		}
	}

	one := func(c int) result.Document {
		r := sampleResult()
		r.Spec.MaxConcurrency = c
		return result.Document{Serving: []*serving.Result{r}}
	}
	rows := rowsOf(t, servingDoc(), one(4)) // the sweep is c=4 and c=8
	if r := rows["c=4 Output tok/s"]; math.IsNaN(r.Values[0]) || math.IsNaN(r.Values[1]) {
		t.Errorf("c=4 against c=4: %v (rows %v)", r.Values, keysOf(rows))
	}
	if r := rows["c=8 Output tok/s"]; math.IsNaN(r.Values[0]) || !math.IsNaN(r.Values[1]) {
		t.Errorf("c=8 against a run at c=4: %v", r.Values)
	}
	rows = rowsOf(t, one(4), one(8))
	if r := rows["Output tok/s"]; math.IsNaN(r.Values[0]) || math.IsNaN(r.Values[1]) {
		t.Errorf("two single runs: %v (rows %v)", r.Values, keysOf(rows))
	}
}

func keysOf(m map[string]DocRow) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// throughputDoc is a throughput run of a bfloat16 and an int8 row (tok/s bf and i8,
// memory 3 and 2 MiB), each with a serving point.
func throughputDoc(bf, i8 float64) result.Document {
	row := func(dtype string, tps float64, mem int64) result.ThroughputRow {
		return result.ThroughputRow{Dtype: dtype, Throughput: tps, WeightBytes: mem << 20}
	}
	return result.Document{Throughput: &result.Throughput{Rows: []result.ThroughputRow{row("bfloat16", bf, 3), row("int8", i8, 2)}},
		Serving: []*serving.Result{sampleResult(), sampleResult()}}
}

// TestCompareThroughputRows: two throughput runs compare row by row (the dtype the
// group): JetStream's tok/s and the memory each row needed, then the row's serving
// figures; the rows' points no longer collide (they share concurrency and rate).
func TestCompareThroughputRows(t *testing.T) {
	rows := rowsOf(t, throughputDoc(40, 60), throughputDoc(50, 45))
	for label, want := range map[string][2]float64{
		"bfloat16 throughput (token/s)": {40, 50}, "int8 throughput (token/s)": {60, 45},
		"bfloat16 weights + KV (MiB)": {3, 3}, "int8 weights + KV (MiB)": {2, 2},
	} {
		r, ok := rows[label]
		if !ok || r.Values[0] != want[0] || r.Values[1] != want[1] {
			t.Errorf("%s: %+v (in %d rows)", label, r.Values, len(rows))
		}
	}
	if r := rows["int8 throughput (token/s)"]; math.Abs(r.DiffPct[1]+25) > 1e-9 || !r.Headline {
		t.Errorf("int8 diff %v headline %v", r.DiffPct, r.Headline)
	}
	if r, ok := rows["int8 Mean TTFT (ms)"]; !ok || r.Verdict[1] != VerdictNoise {
		t.Errorf("int8 TTFT row %+v", r)
	}
	if _, ok := rows["bfloat16 Output tok/s"]; ok {
		t.Error("the row's throughput is listed twice")
	}
}
