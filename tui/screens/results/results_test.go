package results

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
)

func benchResult() *micro.Result {
	spec := workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin:stories260K"}}, Prompt: []int{512}, Gen: []int{128}, Reps: 2}.WithDefaults()
	rec := func(p, n int, ns ...uint64) micro.Record {
		return micro.Record{ModelFilename: "stories260K", ModelType: "llama ?B all F32", ModelSize: 1 << 20, ModelNParams: 292000,
			Backends: "CPU", NThreads: 2, NBatch: 2048, NUBatch: 512, TypeK: "f16", TypeV: "f16", NPrompt: p, NGen: n, SamplesNs: ns,
			BuildCommit: "dev", TestTime: "2026-11-21T00:00:00Z"}
	}
	return &micro.Result{Spec: spec, Records: []micro.Record{rec(512, 0, 2e8, 2.1e8), rec(0, 128, 5e7, 5.2e7)}}
}

func TestViews(t *testing.T) {
	for _, tc := range []struct {
		name string
		done run.Done
		want string
	}{
		{"bench", run.Done{Result: benchResult(), Elapsed: 3 * time.Second}, "✓ finished in 3.0 s"},
		{"partial", run.Done{Result: &micro.Result{Partial: true}, Partial: true}, "■ stopped early"},
		{"failed", run.Done{Err: errors.New("load: no such file")}, "✗ failed: load: no such file"},
	} {
		m := New(theme.New(theme.ASCII), nil)
		m.SetSize(80, 21)
		d := tc.done
		doc := result.Document{Title: "bench · stories260K", Partial: d.Partial}
		if r, ok := d.Result.(*micro.Result); ok {
			doc.Bench = r
		}
		m.Show(doc, "", nil, d.Err, d.Elapsed)
		if v := m.View(); !strings.Contains(v, tc.want) {
			t.Errorf("%s: view lacks %q:\n%s", tc.name, tc.want, v)
		}
		if tc.name == "bench" {
			for _, sz := range golden.Sizes {
				m.SetSize(sz[0], sz[1]-3)
				golden.Assert(t, fmt.Sprintf("bench_%dx%d", sz[0], sz[1]), m.View())
			}
			// the key columns (test, t/s) stay in view at every size: the others
			// are dropped whole and → brings them in
			for _, w := range []int{60, 80, 120} {
				m.SetSize(w, 21)
				v := m.View()
				if !strings.Contains(v, "2499.05 ± ") || !strings.Contains(v, "pp512") {
					t.Errorf("%d columns: the t/s figures or the test are not in view:\n%s", w, v)
				}
			}
			m.SetSize(80, 21)
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyRight})
			if v := m.View(); !strings.Contains(v, "2499.05") || !strings.Contains(v, "size") || strings.Contains(v, "| model") {
				t.Errorf("→ did not bring the next column in:\n%s", v)
			}
		}
	}
}

// TestKernelsView: a kernel benchmark's report shows as its printed text.
func TestKernelsView(t *testing.T) {
	m := New(theme.New(theme.ASCII), nil)
	m.SetSize(120, 30)
	rep := &kernelbench.Report{Sections: []kernelbench.Section{{Title: "Causal Mask", Text: kernelbench.Box("Causal Mask") + "Correctness check passed ✅\n"}}}
	m.Show(result.Document{Title: "kernels · attention-masks", Kernels: rep}, "", nil, nil, time.Second)
	if v := m.View(); !strings.Contains(v, "Correctness check passed") || !strings.Contains(v, "Causal Mask") {
		t.Errorf("view:\n%s", v)
	}
}

// TestBatchView: a run of TGI's benchmark shows TGI's tables.
func TestBatchView(t *testing.T) {
	m := New(theme.New(theme.ASCII), nil)
	m.SetSize(140, 40)
	run := micro.BatchRun{PrefillNs: 8e6, DecodeNs: 6e6, DecodeStepsNs: []int64{3e6, 3e6}}
	w := 1
	res := &micro.BatchResult{Spec: workloads.BatchSpec{SequenceLength: 16, DecodeLength: 3, Runs: 1, Warmups: &w}, Model: "stories260K", Label: "CPU - 2 threads",
		Points: []micro.BatchPoint{{BatchSize: 4, Runs: []micro.BatchRun{run}}}}
	m.Show(result.Document{Title: "batch · stories260K", Batch: res}, "", nil, nil, time.Second)
	if v := m.View(); !strings.Contains(v, "| Decode (token) | 4          | 3.00 ms") || !strings.Contains(v, "# CPU - 2 threads") {
		t.Errorf("view:\n%s", v)
	}
}

// TestServeViews: a serve-bench run and a power × concurrency sweep at every size:
// the sweep table keeps its point and throughput columns (golden.Assert checks no
// figure is cut).
func TestServeViews(t *testing.T) {
	for name, doc := range map[string]result.Document{
		"serve": fixture.ServeDoc("serve-bench · stories260K", 40, 4, 1, 0),
		"sweep": fixture.SweepDoc("serve-bench · stories260K · c=1,4 · 300,200 W", 20, []float64{300, 200}, []int{1, 4}, 0),
	} {
		m := New(theme.New(theme.ASCII), nil)
		m.Show(doc, "", nil, nil, 2*time.Second)
		for _, sz := range golden.Sizes {
			m.SetSize(sz[0], sz[1]-3)
			v := m.View()
			golden.Assert(t, fmt.Sprintf("%s_%dx%d", name, sz[0], sz[1]), v)
			if name == "sweep" && (!strings.Contains(v, "concurrency") || !strings.Contains(v, "out tok/s") || !strings.Contains(v, "300 W")) {
				t.Errorf("%v: the sweep's key columns are not in view:\n%s", sz, v)
			}
		}
	}
}

// TestDuration: a quick run is not "finished in 0.0 s".
func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{12 * time.Millisecond: "12 ms", 300 * time.Microsecond: "1 ms",
		3200 * time.Millisecond: "3.2 s", 125 * time.Second: "2 min 05 s"} {
		if got := Duration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
	m := New(theme.New(theme.ASCII), nil)
	m.SetSize(80, 21)
	m.Show(result.Document{Title: "t", Bench: benchResult()}, "", nil, nil, 20*time.Millisecond)
	if v := m.View(); !strings.Contains(v, "✓ finished in 20 ms") {
		t.Errorf("view:\n%s", v)
	}
}

// TestThroughputView: a throughput run shows JetStream's table (date, device, dtype,
// batch size, cache and input/output lengths, tok/s per row), the memory and rolling
// window of each row, then each row's serving point under its name, at every size;
// a run that finished no row says so.
func TestThroughputView(t *testing.T) {
	m := New(theme.New(theme.ASCII), nil)
	doc := fixture.ThroughputDoc("throughput · llama-small BF16,Q8_0", 40, 0)
	m.Show(doc, "", nil, nil, 90*time.Second)
	m.SetSize(200, 57)
	v := m.View()
	for _, s := range []string{
		"| Date       | Device               | dtype    | batch size | cache length | max input length | max output length | throughput (token/s) |",
		"| 2026-11-21 | AMD EPYC · 2 threads | bfloat16 | 16         | 512          | 256              | 512               | 40.0                 |",
		"| int8     | 16         |", "| 60.0 ",
		"| bfloat16 | 208.95 MiB (bf16) | 297.00 MiB (f16)  | 505.95 MiB   | used: last 512 positions (cache 512 < 256 + 512), 26 sequences rolled | 32 of 32 finished |",
		"rolling window: cache 512 < input 256 + output 512, each sequence keeps its last 512 positions",
		"bfloat16:", "Serving Benchmark Result", "✓ finished in 1 min 30 s",
	} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
	if i, j := strings.Index(v, "throughput (token/s)"), strings.Index(v, "Serving Benchmark Result"); i < 0 || j < i {
		t.Errorf("JetStream's table is not first")
	}
	for _, sz := range golden.Sizes {
		m.SetSize(sz[0], sz[1]-3)
		golden.Assert(t, fmt.Sprintf("throughput_%dx%d", sz[0], sz[1]), m.View())
	}
	none := doc
	none.Throughput = &result.Throughput{Spec: doc.Throughput.Spec}
	none.Serving = nil
	m.Show(none, "", nil, errors.New("load: no such file"), 0)
	if v := m.View(); !strings.Contains(v, "no row finished") || !strings.Contains(v, "✗ failed: load") {
		t.Errorf("no row:\n%s", v)
	}
}
