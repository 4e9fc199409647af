package report

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// benchDoc and servingDoc are small Documents of each kind.
func benchDoc() result.Document {
	return result.Document{Title: "bench · llama 1B", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Env: []result.KV{{Key: "cpu", Value: "Test CPU | 2 threads"}, {Key: "version", Value: "v1.2"}}, Bench: lbResult()}
}

func servingDoc() result.Document {
	a, b := sampleResult(), sampleResult()
	b.Spec.MaxConcurrency = 8
	return result.Document{Title: "serve-bench", Env: []result.KV{{Key: "version", Value: "v1.2"}}, Serving: []*serving.Result{a, b}}
}

func TestExportFormats(t *testing.T) {
	if got := ExportFormats(); !slices.Equal(got, []string{".csv", ".html", ".json", ".md"}) {
		t.Errorf("ExportFormats() = %v", got)
	}
	dir := t.TempDir()
	for _, name := range []string{"run.txt", "run", "run.markdown"} {
		err := Export(filepath.Join(dir, name), benchDoc())
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		for _, f := range ExportFormats() {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: error %q does not name %s", name, err, f)
			}
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed exports left files: %v", ents)
	}
	if err := Export(filepath.Join(dir, "empty.md"), result.Document{Title: "x"}); err == nil {
		t.Error("a result.Document without results exported")
	}
}

// TestExportAtomic: an export replaces an existing file whole and leaves no temporary
// file; a failing export leaves the old file as it was.
func TestExportAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Run.MD")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Export(path, benchDoc()); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(got), "# bench · llama 1B\n") {
		t.Errorf("export did not replace the file:\n%s", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files after export: %v", ents)
	}
	if err := Export(filepath.Join(dir, "missing", "x.md"), benchDoc()); err == nil {
		t.Error("export into a missing directory succeeded")
	}
	// The rename fails (a directory is in the way): the error comes back and the
	// temporary file is gone.
	if err := os.Mkdir(filepath.Join(dir, "taken.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Export(filepath.Join(dir, "taken.json"), benchDoc()); err == nil {
		t.Error("export over a directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files after a failed export: %v", ents)
	}
}

func TestDocumentMarkdown(t *testing.T) {
	var b strings.Builder
	d := benchDoc()
	if err := DocumentMarkdown(&b, d); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	LlamaBenchMarkdown(&table, d.Bench)
	md := b.String()
	for _, want := range []string{"# bench · llama 1B\n", "| cpu | Test CPU \\| 2 threads |", table.String(), "started: 2026-01-02T03:04:05Z"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "PARTIAL") {
		t.Error("a complete run is marked partial")
	}
	d.Partial = true
	b.Reset()
	DocumentMarkdown(&b, d)
	if !strings.Contains(b.String(), partialNote) {
		t.Errorf("partial run not marked:\n%s", b.String())
	}

	sd := servingDoc()
	sd.Serving[1].Partial = true
	b.Reset()
	if err := DocumentMarkdown(&b, sd); err != nil {
		t.Fatal(err)
	}
	md = b.String()
	var block, sweep strings.Builder
	VLLMBlock(&block, sd.Serving[0])
	VLLMSweepTable(&sweep, sd.Serving)
	for _, want := range []string{block.String(), sweep.String(), "## Point 2: concurrency 8, rate 10.0 (partial)", partialNote} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestDocumentCSV(t *testing.T) {
	var b strings.Builder
	d := benchDoc()
	d.Partial = true
	if err := DocumentCSV(&b, d); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(d.Bench.Records) {
		t.Fatalf("%d rows", len(rows))
	}
	head := rows[0]
	col := func(name string) int { return slices.Index(head, name) }
	if col("avg_ts") < 0 || head[len(head)-1] != "run_partial" {
		t.Fatalf("header %v", head)
	}
	for i, r := range rows[1:] {
		if v, _ := strconv.ParseFloat(r[col("avg_ts")], 64); strconv.FormatFloat(v, 'f', 6, 64) != strconv.FormatFloat(d.Bench.Records[i].AvgTs(), 'f', 6, 64) {
			t.Errorf("row %d avg_ts %s, want %f", i, r[col("avg_ts")], d.Bench.Records[i].AvgTs())
		}
		if r[len(r)-1] != "1" {
			t.Errorf("row %d run_partial %q", i, r[len(r)-1])
		}
	}

	b.Reset()
	sd := servingDoc()
	if err := DocumentCSV(&b, sd); err != nil {
		t.Fatal(err)
	}
	rows, err = csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want a header and one per point", len(rows))
	}
	head = rows[0]
	for i, res := range sd.Serving {
		r := rows[i+1]
		checks := map[string]float64{
			"output_throughput": res.Summary.OutputThroughput, "mean_ttft_ms": res.Summary.TTFT.Mean,
			"p99.9_tpot_ms": res.Summary.TPOT.Percentiles[1].V, "max_concurrency": float64(res.Spec.MaxConcurrency),
		}
		for name, want := range checks {
			j := col(name)
			if j < 0 {
				t.Fatalf("no column %s in %v", name, head)
			}
			if got, _ := strconv.ParseFloat(r[j], 64); strconv.FormatFloat(got, 'f', 4, 64) != strconv.FormatFloat(want, 'f', 4, 64) {
				t.Errorf("point %d %s = %s, want %f", i, name, r[j], want)
			}
		}
		if r[len(r)-1] != "0" || r[col("power_mean_w")] != "" {
			t.Errorf("point %d: run_partial %q power_mean_w %q", i, r[len(r)-1], r[col("power_mean_w")])
		}
	}
}

func TestDocumentJSON(t *testing.T) {
	for _, d := range []result.Document{benchDoc(), servingDoc()} {
		var b strings.Builder
		if err := DocumentJSON(&b, d); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Schema        string              `json:"schema"`
			SchemaVersion int                 `json:"schema_version"`
			Partial       bool                `json:"partial"`
			Kind          string              `json:"kind"`
			Env           []map[string]string `json:"env"`
			Bench         []map[string]any    `json:"bench"`
			Serving       []map[string]any    `json:"serving"`
			Definitions   map[string]string   `json:"metric_definitions"`
		}
		if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if got.Schema != ExportSchema || got.SchemaVersion != ExportSchemaVersion || got.Partial || len(got.Env) != len(d.Env) || got.Env[0]["key"] != d.Env[0].Key {
			t.Errorf("header %+v", got)
		}
		if d.Bench != nil {
			if got.Kind != "bench" || len(got.Bench) != len(d.Bench.Records) || got.Definitions["avg_ts"] == "" {
				t.Fatalf("bench json %+v", got)
			}
			if v := got.Bench[1]["avg_ts"].(float64); v != d.Bench.Records[1].AvgTs() {
				t.Errorf("avg_ts %v, want %v", v, d.Bench.Records[1].AvgTs())
			}
		} else {
			if got.Kind != "serving" || len(got.Serving) != len(d.Serving) || got.Definitions["tpot"] == "" {
				t.Fatalf("serving json %+v", got)
			}
			if v := got.Serving[1]["mean_ttft_ms"].(float64); v != d.Serving[1].Summary.TTFT.Mean {
				t.Errorf("mean_ttft_ms %v, want %v", v, d.Serving[1].Summary.TTFT.Mean)
			}
			if got.Serving[0]["ttfts"] == nil || got.Serving[0]["tool"] != "llmbench v1.2" {
				t.Errorf("per-request arrays or tool missing: %v %v", got.Serving[0]["ttfts"], got.Serving[0]["tool"])
			}
		}
	}
	d := servingDoc()
	d.Serving[0].Partial = true
	var b strings.Builder
	DocumentJSON(&b, d)
	if !strings.Contains(b.String(), `"partial": true`) {
		t.Error("partial run not marked in JSON")
	}
}
