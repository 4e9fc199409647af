package report

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"llmbench/workloads"
	"llmbench/workloads/micro"
)

// lbResult is a small fixed bench result: two thread counts, pp and tg.
func lbResult() *micro.Result {
	spec := workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "m.gguf"}}, Threads: []int{1, 2}, Reps: 3}.WithDefaults()
	res := &micro.Result{Spec: spec}
	for _, th := range []int{1, 2} {
		for _, test := range [][2]int{{512, 0}, {0, 128}} {
			res.Records = append(res.Records, micro.Record{
				BuildCommit: "abc", CPUInfo: `CPU "quoted", it's`, Backends: "CPU", ModelFilename: "m.gguf",
				ModelType: "llama 1B Q4_0", ModelSize: 636_000_000, ModelNParams: 1_100_000_000,
				NBatch: 2048, NUBatch: 512, NThreads: th, TypeK: "f16", TypeV: "f16",
				NPrompt: test[0], NGen: test[1], TestTime: "2025-01-01T00:00:00Z",
				SamplesNs:           []uint64{uint64(1e9 / th), uint64(1.1e9 / float64(th)), uint64(0.9e9 / float64(th))},
				WeightBytesPerToken: 600_000_000, FLOPsPerRep: 1e12,
				CPUMask: "0x0", Poll: 50, NGPULayers: -1, SplitMode: "layer", Devices: "auto", TensorSplit: "0.00", Overrides: "none", UseMmap: true,
			})
		}
	}
	return res
}

func TestLlamaBenchMarkdown(t *testing.T) {
	var b bytes.Buffer
	res := lbResult()
	res.ReadBandwidth = 20e9
	if err := LlamaBenchMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := "| model                          |       size |     params | backend    | threads |            test |                  t/s |"
	if lines[0] != want {
		t.Errorf("header\n%s\nwant\n%s", lines[0], want)
	}
	if lines[1] != "| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |" {
		t.Errorf("separator %q", lines[1])
	}
	row := "| llama 1B Q4_0                  | 606.54 MiB |     1.10 B | CPU        |       1 |           pp512 |       515.45 ± 51.80 |"
	if lines[2] != row {
		t.Errorf("row\n%s\nwant\n%s", lines[2], row)
	}
	for i, name := range []string{"pp512", "tg128", "pp512", "tg128"} {
		if !strings.Contains(lines[2+i], " "+name+" |") {
			t.Errorf("row %d lacks %s: %s", i, name, lines[2+i])
		}
	}
	if !strings.Contains(b.String(), "build: llmbench abc") || !strings.Contains(b.String(), "of the read-bandwidth ceiling 33.33 t/s (20.0 GB/s measured before the tests") {
		t.Errorf("footer:\n%s", b.String())
	}
	// A tg test's own probe (taken just before it) wins over the run's.
	res.Records[1].ReadBandwidth = 30e9
	b.Reset()
	LlamaBenchMarkdown(&b, res)
	if !strings.Contains(b.String(), "of the read-bandwidth ceiling 50.00 t/s (30.0 GB/s measured just before the test") ||
		strings.Count(b.String(), "measured before the tests") != 1 {
		t.Errorf("per-test ceiling:\n%s", b.String())
	}
	// Probes around the repetitions: their time-average, and their range.
	res.Records[1].ReadBandwidthProbes = []float64{20e9, 40e9, 20e9}
	res.Records[1].ReadBandwidth = micro.BracketMean(res.Records[1].ReadBandwidthProbes)
	b.Reset()
	LlamaBenchMarkdown(&b, res)
	if !strings.Contains(b.String(), "of the read-bandwidth ceiling 50.00 t/s (30.0 GB/s averaged over the 3 probes around its repetitions (20.0–40.0 GB/s) ÷ ") {
		t.Errorf("ceiling of the probes around the repetitions:\n%s", b.String())
	}
	// Probes more than 20 % apart make the share uncertain, and the line says so.
	for _, c := range []struct {
		probes []float64
		note   string // "" when none is due
	}{{[]float64{20e9, 40e9, 20e9}, "; the probes differ by 100 %: the host's read rate moved during the test, so the share is uncertain by as much"},
		{[]float64{30e9, 35.9e9, 33e9}, ""},
		{[]float64{30e9, 36.3e9, 33e9}, "; the probes differ by 21 %: "},
		{[]float64{30e9, 31e9}, ""}} {
		res.Records[1].ReadBandwidthProbes = c.probes
		res.Records[1].ReadBandwidth = micro.BracketMean(c.probes)
		b.Reset()
		LlamaBenchMarkdown(&b, res)
		if got := strings.Contains(b.String(), "; the probes differ by"); got != (c.note != "") || !strings.Contains(b.String(), c.note) {
			t.Errorf("probes %v: want note %q:\n%s", c.probes, c.note, b.String())
		}
	}
	// A test faster than its ceiling says the probe understates the machine; one
	// below it says nothing more.
	r := &res.Records[1]
	r.ReadBandwidthProbes = nil
	perTs := r.ReadBandwidth / r.Ceiling(r.ReadBandwidth) // bytes per token
	for _, c := range []struct {
		ratio string
		bw    float64
		above bool
	}{{"80%", r.AvgTs() * perTs / 0.8, false}, {"500%", r.AvgTs() * perTs / 5, true}} {
		r.ReadBandwidth = c.bw
		b.Reset()
		LlamaBenchMarkdown(&b, res)
		var line string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, r.Name()+" (") && strings.Contains(l, "measured just before the test") {
				line = l
			}
		}
		if !strings.Contains(line, " = "+c.ratio+" of the read-bandwidth ceiling") ||
			strings.Contains(line, "; above the ceiling: the test read its weights faster than the probe") != c.above {
			t.Errorf("ceiling at %s: %q in\n%s", c.ratio, line, b.String())
		}
	}
	res.Records[1].ReadBandwidth, res.Records[1].ReadBandwidthProbes = 0, nil
	// Non-default parameters get columns.
	res.Spec.FlashAttn = []int{0, 1}
	res.Spec.UBatch = []int{256}
	res.Spec.TypeK = []string{"q8_0"}
	b.Reset()
	LlamaBenchMarkdown(&b, res)
	head := strings.SplitN(b.String(), "\n", 2)[0]
	for _, col := range []string{"| n_ubatch |", "| type_k |", "| type_v |", "|  fa |"} {
		if !strings.Contains(head, col) {
			t.Errorf("header lacks %q: %s", col, head)
		}
	}
	if strings.Contains(head, "n_batch") {
		t.Errorf("default n_batch shown: %s", head)
	}
}

func TestLlamaBenchJSON(t *testing.T) {
	for _, format := range []string{"json", "jsonl"} {
		var b bytes.Buffer
		if err := LlamaBenchFormats[format](&b, lbResult()); err != nil {
			t.Fatal(err)
		}
		var objs []map[string]any
		if format == "json" {
			if err := json.Unmarshal(b.Bytes(), &objs); err != nil {
				t.Fatalf("json: %v\n%s", err, b.String())
			}
		} else {
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			for _, l := range lines {
				var o map[string]any
				if err := json.Unmarshal([]byte(l), &o); err != nil {
					t.Fatalf("jsonl line %q: %v", l, err)
				}
				objs = append(objs, o)
			}
		}
		if len(objs) != 4 {
			t.Fatalf("%s: %d objects", format, len(objs))
		}
		o := objs[0]
		types := map[string]string{
			"build_commit": "string", "build_number": "number", "cpu_info": "string", "gpu_info": "string", "backends": "string",
			"model_filename": "string", "model_type": "string", "model_size": "number", "model_n_params": "number",
			"n_batch": "number", "n_ubatch": "number", "n_threads": "number", "type_k": "string", "type_v": "string",
			"flash_attn": "number", "n_prompt": "number", "n_gen": "number", "n_depth": "number", "test_time": "string",
			"avg_ns": "number", "stddev_ns": "number", "avg_ts": "number", "stddev_ts": "number",
			"samples_ns": "array", "samples_ts": "array",
			"peak_rss_bytes": "number", "kv_cache_bytes": "number", "mem_bw_gbs": "number", "gflops": "number",
		}
		for k, want := range types {
			v, ok := o[k]
			got := "missing"
			switch v.(type) {
			case string:
				got = "string"
			case float64:
				got = "number"
			case []any:
				got = "array"
			}
			if !ok || got != want {
				t.Errorf("%s: %s is %s; want %s", format, k, got, want)
			}
		}
		if o["cpu_info"] != `CPU "quoted", it's` || len(o["samples_ts"].([]any)) != 3 {
			t.Errorf("%s: values %v", format, o)
		}
	}
	var b bytes.Buffer
	LlamaBenchJSON(&b, &micro.Result{})
	if b.String() != "[]\n" {
		t.Errorf("empty json %q", b.String())
	}
}

func TestLlamaBenchCSV(t *testing.T) {
	var b bytes.Buffer
	if err := LlamaBenchCSV(&b, lbResult()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,model_n_params,n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v") {
		t.Fatalf("csv:\n%s", b.String())
	}
	if !strings.Contains(lines[1], `"CPU ""quoted"", it's"`) {
		t.Errorf("quoting: %s", lines[1])
	}
}

func TestLlamaBenchSQL(t *testing.T) {
	var b bytes.Buffer
	if err := LlamaBenchSQL(&b, lbResult()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "CREATE TABLE IF NOT EXISTS llama_bench (\n  build_commit TEXT,\n  build_number INTEGER,") ||
		!strings.Contains(b.String(), "avg_ts REAL") {
		t.Errorf("sql:\n%s", b.String())
	}
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 is not installed; the SQL is not loaded")
	}
	cmd := exec.Command(sqlite, ":memory:")
	cmd.Stdin = strings.NewReader(b.String() + "SELECT count(*), sum(n_threads), typeof(avg_ts), min(cpu_info) FROM llama_bench;\n")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != `4|6|real|CPU "quoted", it's` {
		t.Errorf("sqlite3: %v\n%s", err, out)
	}
}

func lbRun(t *testing.T, name string, res *micro.Result) *LlamaBenchRun {
	t.Helper()
	var b bytes.Buffer
	if err := LlamaBenchJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	r, err := ReadLlamaBench(name, &b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCompareLlamaBench(t *testing.T) {
	a := lbRun(t, "a.json", lbResult())
	c, err := CompareLlamaBench(a, a, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 4 {
		t.Fatalf("%d rows", len(c.Rows))
	}
	for _, r := range c.Rows {
		if !strings.HasPrefix(r.Verdict(), "no significant difference") || r.Speedup != 1 {
			t.Errorf("self-comparison %s: %s, speedup %v", r.Test, r.Verdict(), r.Speedup)
		}
	}
	// B: only 2 threads, twice as fast: n_threads is what differs, tests match on the rest.
	one, two := lbResult(), lbResult()
	one.Records = one.Records[:2]
	two.Records = two.Records[2:]
	for i := range two.Records {
		for j := range two.Records[i].SamplesNs {
			two.Records[i].SamplesNs[j] /= 2
		}
	}
	c, err = CompareLlamaBench(lbRun(t, "t1.json", one), lbRun(t, "t2.json", two), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 2 || c.Diff != "n_threads: 1 → 2" {
		t.Fatalf("rows %+v diff %q", c.Rows, c.Diff)
	}
	for _, r := range c.Rows {
		if !strings.HasPrefix(r.Verdict(), "significant: B faster") || r.Speedup < 3.9 || r.Speedup > 4.1 {
			t.Errorf("%s: %s speedup %v", r.Test, r.Verdict(), r.Speedup)
		}
	}
	var b bytes.Buffer
	LlamaBenchCompareMarkdown(&b, c)
	if !strings.Contains(b.String(), "| test ") || !strings.Contains(b.String(), "| speedup |") || !strings.Contains(b.String(), "| pp512 ") {
		t.Errorf("compare table:\n%s", b.String())
	}
	// A test present on one side only.
	c, _ = CompareLlamaBench(lbRun(t, "all.json", lbResult()), lbRun(t, "t1.json", one), 0.05)
	missing := 0
	for _, r := range c.Rows {
		if r.Missing != "" {
			missing++
		}
	}
	if missing != 2 {
		t.Errorf("%d rows only in A; want 2", missing)
	}
}

func TestReadLlamaBenchSad(t *testing.T) {
	cases := map[string]string{
		"empty":      "",
		"garbage":    "not json",
		"empty list": "[]",
		"no samples": `[{"n_prompt": 1}]`,
		"bad line":   "{\"avg_ts\": 1}\n{oops\n",
		"bad sample": `[{"samples_ts": ["x"]}]`,
	}
	for name, in := range cases {
		if _, err := ReadLlamaBench("x.json", strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// llama-bench's older files wrote flash_attn as a boolean: still readable.
	r, err := ReadLlamaBench("old.jsonl", strings.NewReader(`{"flash_attn": false, "n_prompt": 512, "n_gen": 0, "samples_ts": [1, 2]}`+"\n"))
	if err != nil || r.Tests[0].Fields["flash_attn"] != "false" {
		t.Errorf("old file: %v %+v", err, r)
	}
}

// TestLlamaBenchMarkdownSettings: settings given away from llama-bench's defaults get
// columns named as llama-bench names them; -fa auto (the command line's default) and 0
// (the profiles') get none; -ngl never shows on a CPU backend, as in llama-bench.
func TestLlamaBenchMarkdownSettings(t *testing.T) {
	res := lbResult()
	res.Spec.CPUMask, res.Spec.Poll, res.Spec.SplitMode, res.Spec.UseMmap = []string{"0x1"}, []int{0}, []string{"row"}, []int{0}
	res.Spec.FlashAttn, res.Spec.NGPULayers = []int{workloads.FlashAttnAuto}, []int{99}
	for i := range res.Records {
		r := &res.Records[i]
		r.CPUMask, r.Poll, r.SplitMode, r.UseMmap, r.FlashAttn, r.NGPULayers = "0x1", 0, "row", false, -1, 99
	}
	var b bytes.Buffer
	if err := LlamaBenchMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(b.String(), "\n", 2)[0]
	for _, want := range []string{"| cpu_mask   |", "|       poll |", "| sm     |", "| lm         |"} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	for _, not := range []string{" fa |", " ngl |"} {
		if strings.Contains(head, not) {
			t.Errorf("header has %q:\n%s", not, head)
		}
	}
	if row := strings.Split(b.String(), "\n")[2]; !strings.Contains(row, "| 0x1        |") || !strings.Contains(row, "| none       |") {
		t.Errorf("row: %s", row)
	}
}
