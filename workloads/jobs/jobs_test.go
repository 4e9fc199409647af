package jobs

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/server"
	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/run"
	"llmbench/workloads/store"
	"llmbench/workloads/telemetry"
)

func TestModelRef(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(file, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in, typ string
		want    workloads.BenchModel
		id      string
		err     string
	}{
		{"", "", workloads.BenchModel{Path: workloads.BuiltinModel}, "stories260K", ""},
		{"builtin:stories260K", "", workloads.BenchModel{Path: workloads.BuiltinModel}, "stories260K", ""},
		{file, "", workloads.BenchModel{Path: file}, file, ""},
		{"llama-tiny", "Q4_0", workloads.BenchModel{Shape: "llama-tiny", Type: "Q4_0"}, "synth:llama-tiny:Q4_0", ""},
		{"llama-tiny", "Q4_Z", workloads.BenchModel{}, "", "Q4_Z"},
		{"synth:llama-tiny:Q8_0", "", workloads.BenchModel{Shape: "llama-tiny", Type: "Q8_0"}, "synth:llama-tiny:Q8_0", ""},
		{"synth:llama-tiny", "", workloads.BenchModel{}, "", "synth:SHAPE:TYPE"},
		{"no-such-model", "Q4_0", workloads.BenchModel{}, "", "not a file and not a synthetic shape"},
	}
	for _, c := range cases {
		got, err := ModelRef(c.in, c.typ)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ModelRef(%q, %q): %v, want an error naming %q", c.in, c.typ, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || ModelID(got) != c.id {
			t.Errorf("ModelRef(%q, %q) = %+v (%s), %v; want %+v (%s)", c.in, c.typ, got, ModelID(got), err, c.want, c.id)
		}
	}
}

func TestCheckRefusesBeforeRunning(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	bench := func(m workloads.BenchModel) workloads.Job {
		return workloads.Job{Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{m}, Prompt: []int{8}, Reps: 1}}
	}
	sp := workloads.DefaultServe()
	badKV := sp
	badKV.Engine.KVCacheType = "q5_9"
	cases := []struct {
		job  workloads.Job
		o    Options
		want string
	}{
		{bench(workloads.BenchModel{Path: "/nonexistent.gguf"}), Options{Device: dev}, "no such file"},
		{bench(workloads.BenchModel{Shape: "llama-tiny", Type: "Q4_Z"}), Options{Device: dev}, "Q4_Z"},
		{bench(workloads.BenchModel{Path: workloads.BuiltinModel}), Options{Device: dev, Exports: []string{"out.xyz"}}, "--export"},
		{workloads.Job{Serve: &badKV}, Options{Device: dev}, "--kv-cache-type"},
		{workloads.Job{Bench: bench(workloads.BenchModel{Path: workloads.BuiltinModel}).Bench, PowerLimitW: []float64{300}}, Options{Device: dev}, "nothing changed"},
	}
	for i, c := range cases {
		if err := Check(c.job, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: Check = %v; want an error naming %q", i, err, c.want)
		}
	}
	if err := Check(bench(workloads.BenchModel{Path: workloads.BuiltinModel}), Options{Device: dev}); err != nil {
		t.Errorf("a good job: %v", err)
	}
}

// TestHeadlessBench runs a small bench through Headless: the table on stdout, the run
// kept in the store with the same document Headless returns, and the export written.
func TestHeadlessBench(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "out.json")
	job := workloads.Job{Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{{Path: workloads.BuiltinModel}}, Prompt: []int{8}, Gen: []int{4}, Threads: []int{1}, Reps: 2}}
	var out, errb bytes.Buffer
	stored, err := Headless(context.Background(), job, Options{Device: dev, Store: st, Exports: []string{export}, Build: "test"},
		Terminal{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "pp8") || !strings.Contains(out.String(), "tg4") {
		t.Errorf("no llama-bench table:\n%s", out.String())
	}
	if stored.ID == "" || len(stored.Doc.Bench.Records) != 2 {
		t.Fatalf("stored %+v", stored)
	}
	doc, err := st.Load(stored.ID)
	if err != nil || len(doc.Bench.Records) != 2 || doc.Bench.Records[1].SamplesNs[1] != stored.Doc.Bench.Records[1].SamplesNs[1] {
		t.Errorf("the store holds %+v, %v", doc.Bench, err)
	}
	if fi, err := os.Stat(export); err != nil || fi.Size() == 0 {
		t.Errorf("export: %v", err)
	}
	if !strings.Contains(errb.String(), "saved run "+stored.ID) || !strings.Contains(errb.String(), "exported "+export) {
		t.Errorf("log lacks the store and export lines:\n%s", errb.String())
	}
}

// TestNothingMeasuredNothingKept: a serving job whose backend cannot be reached
// fails before any request and leaves no record.
func TestNothingMeasuredNothingKept(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sp := workloads.DefaultServe()
	sp.Backend, sp.BaseURL, sp.Dataset.NumPrompts = "openai", "http://127.0.0.1:1", 2
	var out, errb bytes.Buffer
	_, err = Headless(context.Background(), workloads.Job{Serve: &sp}, Options{Device: dev, Store: st}, Terminal{Stdout: &out, Stderr: &errb})
	if err == nil || !strings.Contains(err.Error(), "--backend inproc") {
		t.Errorf("err %v", err)
	}
	if list, _ := st.List(); len(list) != 0 {
		t.Errorf("kept %+v", list)
	}
}

// TestPowerRange: the range, default and current limit of GPU 0, "needs root" when
// the driver refuses to set a limit, and why there is none without a GPU.
func TestPowerRange(t *testing.T) {
	for _, deny := range []bool{false, true} {
		f, err := telemetry.NewFake(telemetry.FakeOptions{DenySet: deny})
		if err != nil {
			t.Fatal(err)
		}
		p := (&Device{GPUs: f}).PowerRange()
		want := PowerRange{MinW: 200, MaxW: 700, DefaultW: 700, CurrentW: 700}
		if deny {
			want.Refused = "needs root"
		}
		if p != want {
			t.Errorf("deny %v: %+v, want %+v", deny, p, want)
		}
	}
	if p := (&Device{Note: "NVML: no device."}).PowerRange(); p.Refused != "no GPU (NVML: no device)" {
		t.Errorf("no GPU: %+v", p)
	}
}

// TestCheckRefusesNotGGUF: a model path that is not a GGUF file (the README a newcomer
// picked) is refused by Check in one line, for bench and serve jobs alike, so a
// front end that checks first keeps nothing; a bench job that ran anyway used to be
// kept as a failed run.
func TestCheckRefusesNotGGUF(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("README.md", []byte("# llmbench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore("data")
	if err != nil {
		t.Fatal(err)
	}
	serve := workloads.DefaultServe()
	serve.Model = "README.md"
	for _, job := range []workloads.Job{
		{Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "README.md"}}, Prompt: []int{8}, Reps: 1}},
		{Serve: &serve},
	} {
		o := Options{Device: dev, Store: st}
		err := Check(job, o)
		if err == nil || err.Error() != `README.md: not a GGUF file (magic "# ll")` {
			t.Errorf("%s: Check = %v; want README.md: not a GGUF file (magic \"# ll\")", job.Kind(), err)
		}
		if err == nil { // what a front end does after a Check that passes
			var out, errb bytes.Buffer
			Headless(context.Background(), job, o, Terminal{Stdout: &out, Stderr: &errb})
		}
		if list, _ := st.List(); len(list) != 0 {
			t.Errorf("%s: the store keeps %+v", job.Kind(), list)
		}
	}
}

// TestSyntheticWriteProgress: while a synthetic model is written, the run publishes
// its size and the free disk in the log, then progress in bytes of the file (never
// going back, out of the planned size), and names the file only once it is complete.
func TestSyntheticWriteProgress(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	plan, err := synth.Cache{Dir: cache}.Plan("llama-tiny", "Q8_0", synth.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	job := workloads.Job{Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{{Shape: "llama-tiny", Type: "Q8_0"}},
		Prompt: []int{4}, Gen: []int{0}, Threads: []int{1}, Reps: 1}}
	_, events := run.Start(context.Background(), Workload(job, Options{Device: dev, CacheDir: cache}))
	var logs []string
	var last float64
	bytesSeen, prepared, pathLogged := 0, 0, false
	for ev := range events {
		switch e := ev.(type) {
		case run.Log:
			logs = append(logs, e.Text)
			if strings.HasPrefix(e.Text, "synthetic model synth:llama-tiny:Q8_0: ") {
				pathLogged = true
				if st, err := os.Stat(plan.Path); err != nil || st.Size() != plan.Size {
					t.Errorf("the log names the file before it is complete: %v, %v", st, err)
				}
			}
		case run.Progress:
			if e.Unit != ProgressBytes {
				continue
			}
			if strings.HasPrefix(e.Label, "preparing weights ") {
				prepared++ // the load's own step, after the file is written
				if !pathLogged {
					t.Errorf("weights prepared before the file was complete: %+v", e)
				}
				continue
			}
			bytesSeen++
			if pathLogged || e.Total != float64(plan.Size) || e.Done < last || !strings.HasPrefix(e.Label, "writing synth:llama-tiny:Q8_0 · ") {
				t.Errorf("progress %+v after %v (path logged %v); want bytes of %d, never back", e, last, pathLogged, plan.Size)
			}
			last = e.Done
		case run.Done:
			if e.Err != nil {
				t.Fatal(e.Err)
			}
		}
	}
	if bytesSeen == 0 || prepared == 0 || !pathLogged {
		t.Errorf("%d writing and %d preparing progress events, path logged %v; logs %q", bytesSeen, prepared, pathLogged, logs)
	}
	// The free space is read again when the job plans, and other processes write to
	// the disk in between: the line is checked up to it.
	want, _, _ := strings.Cut("synthetic model "+plan.String(), " to write, ")
	if !slices.ContainsFunc(logs, func(l string) bool {
		return strings.HasPrefix(l, want+" to write, ") && strings.HasSuffix(l, " free")
	}) {
		t.Errorf("logs %q lack %q", logs, want+" to write, … free")
	}
}

func TestWritingLabel(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{0, 4 << 20, 0, "writing m · 0 B of 4.00 MiB"},
		{1 << 20, 4 << 20, 500 * time.Millisecond, "writing m · 1.00 MiB of 4.00 MiB"}, // too early for a rate
		{1 << 20, 4 << 20, 2 * time.Second, "writing m · 1.00 MiB of 4.00 MiB · ETA 6 s"},
		{4 << 20, 4 << 20, 8 * time.Second, "writing m · 4.00 MiB of 4.00 MiB"},
	} {
		if got := writingLabel("m", c.done, c.total, c.elapsed); got != c.want {
			t.Errorf("writingLabel(%d, %d, %v) = %q; want %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
}

// TestHeadlessBatch runs TGI's benchmark on the built-in model through Headless:
// TGI's tables on stdout, the run kept in the store as Headless returned it, and the
// markdown export holding the same tables; Check refuses a bad batch job first.
func TestHeadlessBatch(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		job  workloads.Job
		want string
	}{
		{workloads.Job{Batch: &workloads.BatchSpec{Model: workloads.BenchModel{Shape: "llama-tiny", Type: "Q4_Z"}}}, "Q4_Z"},
		{workloads.Job{Batch: &workloads.BatchSpec{Watermark: true}}, "--watermark"},
		{workloads.Job{Batch: &workloads.BatchSpec{}, PowerLimitW: []float64{300}}, "nothing changed"},
	} {
		if err := Check(c.job, Options{Device: dev}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check = %v; want an error naming %q", err, c.want)
		}
	}
	dir := t.TempDir()
	st, err := store.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "out.md")
	w := 0
	job := workloads.Job{Batch: &workloads.BatchSpec{SequenceLength: 8, DecodeLength: 3, BatchSize: []int{1, 2}, Runs: 2, Warmups: &w, Threads: 1}}
	if err := Check(job, Options{Device: dev}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	stored, err := Headless(context.Background(), job, Options{Device: dev, Store: st, Exports: []string{export}, Build: "test"},
		Terminal{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"| Decode (token) | 1 ", "| Decode  | 1 ", "# CPU - 1 threads", "| Model              | stories260K |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if stored.ID == "" || stored.Doc.Batch == nil || len(stored.Doc.Batch.Points) != 2 {
		t.Fatalf("stored %+v", stored)
	}
	doc, err := st.Load(stored.ID)
	if err != nil || doc.Batch == nil || doc.Batch.Points[1].Runs[1].DecodeNs != stored.Doc.Batch.Points[1].Runs[1].DecodeNs {
		t.Errorf("the store holds %+v, %v", doc.Batch, err)
	}
	md, err := os.ReadFile(export)
	if err != nil || !strings.Contains(string(md), out.String()[strings.Index(out.String(), "| Step "):]) {
		t.Errorf("the export lacks the printed tables: %v\n%s", err, md)
	}
}

// TestHeadlessBatchServer runs TGI's benchmark against llmbench's own server (the
// built-in model behind engine/server): batch-size simultaneous requests per run,
// every point measured, and the report, the stored result and the history say the
// figures are approximations.
func TestHeadlessBatchServer(t *testing.T) {
	e, err := engine.LoadBytes(context.Background(), builtin.Name, builtin.Stories260K, engine.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv, err := server.New(server.Config{Gen: e, Model: builtin.Name, MaxRunning: 4, MaxQueue: 16})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := 1
	job := workloads.Job{Batch: &workloads.BatchSpec{Backend: "openai", BaseURL: hs.URL + "/", SequenceLength: 12, DecodeLength: 4,
		BatchSize: []int{1, 3}, Runs: 2, Warmups: &w}}
	if err := Check(job, Options{Device: dev}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	stored, err := Headless(context.Background(), job, Options{Device: dev, Store: st, Build: "test"}, Terminal{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	b := stored.Doc.Batch
	if b == nil || !b.Approximate || b.Model != builtin.Name || len(b.Points) != 2 || len(b.Points[1].Runs) != 2 || len(b.Points[1].Runs[0].DecodeStepsNs) == 0 {
		t.Fatalf("result %+v", b)
	}
	if !strings.Contains(out.String(), micro.ApproximationNote) || !strings.Contains(out.String(), "| URL       | "+hs.URL) {
		t.Errorf("stdout:\n%s", out.String())
	}
	list, _ := st.List()
	if len(list) != 1 || !strings.HasPrefix(list[0].Headline, "≈ ") {
		t.Errorf("history %+v", list)
	}
}
