package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
)

var updateTGI = flag.Bool("update-tgi", false, "rewrite testdata/tgi_report.golden")

// tgiRun is one scripted run: prefill and whole-decode milliseconds, 7 decode steps.
func tgiRun(prefillMs, decodeMs float64) micro.BatchRun {
	steps := make([]int64, 7)
	for i := range steps {
		steps[i] = int64(decodeMs * 1e6 / 7)
	}
	return micro.BatchRun{PrefillNs: int64(prefillMs * 1e6), DecodeNs: int64(decodeMs * 1e6), DecodeStepsNs: steps}
}

// tgiSample is a run of two batch sizes with fixed samples whose figures are worked
// out by hand in TestTGIFigures.
func tgiSample() *micro.BatchResult {
	w, temp := 1, 0.7
	return &micro.BatchResult{
		Spec: workloads.BatchSpec{Backend: "inproc", Model: workloads.BenchModel{Shape: "llama-1b", Type: "Q4_0"},
			SequenceLength: 128, DecodeLength: 8, BatchSize: []int{1, 2}, Runs: 3, Warmups: &w, Temperature: &temp, KVType: "f16", Threads: 2},
		Model: "synth:llama-1b:Q4_0", ModelType: "llama 1B Q4_0", Backend: "cpu/avx2", Threads: 2, Label: "CPU - 2 threads",
		Points: []micro.BatchPoint{
			{BatchSize: 1, Runs: []micro.BatchRun{tgiRun(110, 77), tgiRun(100, 70), tgiRun(120, 84)}},
			{BatchSize: 2, Runs: []micro.BatchRun{tgiRun(150, 84), tgiRun(200, 98), tgiRun(160, 91)}},
		},
	}
}

// TestTGIFigures checks the tables' figures against values worked out by hand:
// averages, extremes, percentiles by linear interpolation between the sorted runs
// (batch 2's prefill 150, 160, 200 ms: p90 = 160 + 0.8·40 = 192, p99 = 160 + 0.98·40
// = 199.2) and TGI's throughputs (batch / prefill; batch × steps / decode total).
func TestTGIFigures(t *testing.T) {
	r := tgiSample()
	lat := TGILatencyTable(r)
	for _, want := range []string{
		"| Prefill        | 1          | 110.00 ms | 100.00 ms | 120.00 ms | 110.00 ms | 118.00 ms | 119.80 ms |",
		"|                | 2          | 170.00 ms | 150.00 ms | 200.00 ms | 160.00 ms | 192.00 ms | 199.20 ms |",
		"| Decode (token) | 1          | 11.00 ms  | 10.00 ms  | 12.00 ms  | 11.00 ms  | 11.80 ms  | 11.98 ms  |",
		"|                | 2          | 13.00 ms  | 12.00 ms  | 14.00 ms  | 13.00 ms  | 13.80 ms  | 13.98 ms  |",
		"| Decode (total) | 1          | 77.00 ms  | 70.00 ms  | 84.00 ms  | 77.00 ms  | 82.60 ms  | 83.86 ms  |",
		"|                | 2          | 91.00 ms  | 84.00 ms  | 98.00 ms  | 91.00 ms  | 96.60 ms  | 97.86 ms  |",
	} {
		if !strings.Contains(lat, want+"\n") {
			t.Errorf("latency table lacks\n%s\n in\n%s", want, lat)
		}
	}
	thr := TGIThroughputTable(r)
	for _, want := range []string{
		// 1/0.11, 1/0.10, 1/0.12 s; 2/0.15, 2/0.20, 2/0.16 s
		"| Prefill | 1          | 9.14 tokens/secs   | 8.33 tokens/secs   | 10.00 tokens/secs  |",
		"|         | 2          | 11.94 tokens/secs  | 10.00 tokens/secs  | 13.33 tokens/secs  |",
		// 7/0.077, 7/0.070, 7/0.084 s; 14/0.084, 14/0.098, 14/0.091 s
		"| Decode  | 1          | 91.41 tokens/secs  | 83.33 tokens/secs  | 100.00 tokens/secs |",
		"|         | 2          | 154.46 tokens/secs | 142.86 tokens/secs | 166.67 tokens/secs |",
	} {
		if !strings.Contains(thr, want+"\n") {
			t.Errorf("throughput table lacks\n%s\n in\n%s", want, thr)
		}
	}
}

// TestTGIReportGolden compares the whole report (launcher and parameter tables, the
// labelled section with both tables) with testdata/tgi_report.golden, and checks the
// layout TGI's tables have: every line of a table as wide as its header, the
// headers' columns exactly TGI's.
func TestTGIReportGolden(t *testing.T) {
	var b bytes.Buffer
	if err := TGIReport(&b, tgiSample()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "tgi_report.golden")
	if *updateTGI {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("report differs from the golden file:\n got:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, h := range []string{
		"| Step           | Batch Size | Average   | Lowest    | Highest   | p50       | p90       | p99       |\n",
		"| Step    | Batch Size | Average            | Lowest             | Highest            |\n",
		"| Parameter          | Value               |\n",
		"| Temperature        | Some(0.7)           |\n| Top K              | None                |\n",
		"\n# CPU - 2 threads\n\n",
	} {
		if !strings.Contains(b.String(), h) {
			t.Errorf("report lacks %q", h)
		}
	}
	for _, table := range strings.Split(b.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		for _, l := range lines {
			if len([]rune(l)) != len([]rune(lines[0])) {
				t.Errorf("line %q is not as wide as its header %q", l, lines[0])
			}
		}
	}
}

// TestTGIReportSections puts two runs in one report: the shared tables once, a
// section per label, a server's run marked as an approximation and its own launcher
// table printed in its section.
func TestTGIReportSections(t *testing.T) {
	a := tgiSample()
	s := *tgiSample()
	s.Label, s.Approximate = "Server - http://x", true
	s.Spec.Backend, s.Spec.BaseURL = "tgi", "http://x"
	var b bytes.Buffer
	if err := TGIReport(&b, a, &s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "| Sequence Length"); n != 1 {
		t.Errorf("parameter table printed %d times, want once (the runs share it)", n)
	}
	if n := strings.Count(out, "| Backend "); n != 2 {
		t.Errorf("launcher table printed %d times, want 2 (the server's differs)", n)
	}
	i, j := strings.Index(out, "# CPU - 2 threads"), strings.Index(out, "# Server - http://x")
	if i < 0 || j < i || !strings.Contains(out[j:], micro.ApproximationNote) || strings.Contains(out[:j], micro.ApproximationNote) {
		t.Errorf("sections or approximation note misplaced:\n%s", out)
	}
	if err := TGIReport(&b); err == nil {
		t.Error("a report of no run written")
	}
	// A point with no run (a partial run rebuilt from the store) has no row; the Step
	// is named on the first row shown.
	p := tgiSample()
	p.Points[0].Runs = nil
	if lat := TGILatencyTable(p); !strings.Contains(lat, "| Prefill        | 2          |") || strings.Contains(lat, "| 1 ") {
		t.Errorf("latency table without batch 1's runs:\n%s", lat)
	}
}

// TestTGIExports writes the run as CSV and JSON and reads the JSON back for a merged
// report: the figures are the tables' own.
func TestTGIExports(t *testing.T) {
	d := result.Document{Title: "batch", Batch: tgiSample()}
	var c bytes.Buffer
	if err := DocumentCSV(&c, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.String()), "\n")
	if len(lines) != 1+5*2 {
		t.Fatalf("%d CSV lines, want a header and 10 rows:\n%s", len(lines), c.String())
	}
	if want := `"CPU - 2 threads","synth:llama-1b:Q4_0","cpu/avx2","2","128","8","prefill","2","3","ms","170","150","200","160","192","199.2","false","false"`; lines[2] != want {
		t.Errorf("CSV row\n got %s\nwant %s", lines[2], want)
	}
	var j bytes.Buffer
	if err := DocumentJSON(&j, d); err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Kind   string
		Tables []struct {
			Step      string
			BatchSize int `json:"batch_size"`
			Stats     micro.BatchStats
		}
	}
	if err := json.Unmarshal(j.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Kind != "batch" || len(obj.Tables) != 10 || obj.Tables[1].Stats.P90 != 192 {
		t.Errorf("JSON export: kind %q, %d table rows, %+v", obj.Kind, len(obj.Tables), obj.Tables)
	}
	back, err := ReadTGIRun("x.json", &j)
	if err != nil {
		t.Fatal(err)
	}
	if TGILatencyTable(back) != TGILatencyTable(d.Batch) {
		t.Error("the JSON export does not give back the same tables")
	}
	var h bytes.Buffer
	if err := DocumentHTML(&h, d); err != nil || !strings.Contains(h.String(), "| Decode (token) | 1          | 11.00 ms ") ||
		!strings.Contains(h.String(), "Latency vs batch size") || !strings.Contains(h.String(), "Decode throughput vs batch size") {
		t.Errorf("html export: %v\n%s", err, h.String())
	}
	if _, err := ReadTGIRun("y.json", strings.NewReader(`{"kind":"bench"}`)); err == nil {
		t.Error("a bench export read as a batch run")
	}
}

// TestTGICompare: two batch runs compare batch size by batch size: prefill and
// per-token latency (lower is better) and decode throughput, every run a sample; a
// run twice as slow is +100 % latency and −50 % throughput.
func TestTGICompare(t *testing.T) {
	a, b := tgiSample(), tgiSample()
	for i := range b.Points {
		for j := range b.Points[i].Runs {
			r := &b.Points[i].Runs[j]
			r.PrefillNs, r.DecodeNs = 2*r.PrefillNs, 2*r.DecodeNs
		}
	}
	c, err := CompareDocs([]result.Document{{Title: "a", Batch: a}, {Title: "b", Batch: b}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 6 {
		t.Fatalf("%d rows, want 2 batch sizes × 3 metrics", len(c.Rows))
	}
	for _, r := range c.Rows {
		want := 100.0
		if r.Metric == "Decode tokens/s" {
			want = -50
		}
		if math.Abs(r.DiffPct[1]-want) > 1e-9 || len(r.Samples[0]) != 3 || !strings.HasPrefix(r.Group, "batch ") {
			t.Errorf("%s: %+.3f %% (want %+.0f), samples %v", r.Label(), r.DiffPct[1], want, r.Samples)
		}
	}
}
