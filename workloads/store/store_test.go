package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"

	"go.yaml.in/yaml/v3"
)

func benchProfile() workloads.Job {
	return workloads.Job{Name: "t", Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{{Path: workloads.BuiltinModel}}, Prompt: []int{16}, Gen: []int{8}, Reps: 3}}
}

// keptJob reads back the job a record keeps.
func keptJob(t *testing.T, s *Store, id string) (workloads.Job, error) {
	t.Helper()
	b, err := s.ProfileYAML(id)
	if err != nil {
		return workloads.Job{}, err
	}
	var k keptProfile
	if err := yaml.Unmarshal(b, &k); err != nil || len(k.Runs) != 1 {
		return workloads.Job{}, fmt.Errorf("kept profile %q: %v", b, err)
	}
	return k.Runs[0], nil
}

func rec(name string, reps int) micro.Record {
	r := micro.Record{ModelFilename: name, ModelType: "llama ?B all F32", NPrompt: 16, SamplesNs: []uint64{}}
	for i := range reps {
		r.SamplesNs = append(r.SamplesNs, uint64(1e6*(i+1)))
	}
	return r
}

func TestDataDir(t *testing.T) {
	t.Setenv("LLMBENCH_HOME", "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	if d, _ := DataDir(""); d != "/xdg/llmbench" {
		t.Errorf("XDG: %s", d)
	}
	t.Setenv("LLMBENCH_HOME", "/home-override")
	if d, _ := DataDir(""); d != "/home-override" {
		t.Errorf("LLMBENCH_HOME: %s", d)
	}
	if d, _ := DataDir("/flag"); d != "/flag" {
		t.Errorf("flag: %s", d)
	}
	t.Setenv("LLMBENCH_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/h")
	if d, _ := DataDir(""); d != "/h/.local/share/llmbench" {
		t.Errorf("default: %s", d)
	}
}

func TestStoreBenchLifecycle(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Create(benchProfile(), result.Environment(result.KV{Key: "build", Value: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Status != Running || !list[0].Partial {
		t.Fatalf("while running: %+v", list)
	}
	w.BenchRecord(0, rec("a", 1))
	w.BenchRecord(0, rec("a", 2))
	w.BenchRecord(1, rec("b", 1))
	// Mid-run, Load rebuilds from the samples: the last line of a key wins.
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	doc, err := s.Load(w.ID())
	if err != nil || doc.Bench == nil || len(doc.Bench.Records) != 2 || len(doc.Bench.Records[0].SamplesNs) != 2 || !doc.Partial {
		t.Fatalf("mid-run load: %+v %v", doc.Bench, err)
	}
	final := &micro.Result{Spec: benchProfile().Bench.WithDefaults(), Records: []micro.Record{rec("a", 3), rec("b", 3)}}
	if err := w.Finish(result.Document{Bench: final}, nil); err != nil {
		t.Fatal(err)
	}
	list, _ = s.List()
	if len(list) != 1 || list[0].Status != Done || list[0].Partial || list[0].Kind != "bench" || !strings.Contains(list[0].Headline, "t/s") {
		t.Fatalf("done: %+v", list)
	}
	doc, err = s.Load(w.ID())
	if err != nil || doc.Partial || len(doc.Bench.Records) != 2 || len(doc.Bench.Records[1].SamplesNs) != 3 || doc.Title != "t" {
		t.Fatalf("load: %+v %v", doc, err)
	}
	if len(doc.Env) == 0 || doc.Env[len(doc.Env)-1].Value != "test" {
		t.Errorf("env %v", doc.Env)
	}
	p, err := keptJob(t, s, w.ID())
	if err != nil || p.Bench == nil || p.Bench.Reps != 3 {
		t.Errorf("profile: %+v %v", p, err)
	}
	if err := s.Delete(w.ID()); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
	for _, id := range []string{"", "..", "a/b", w.ID()} {
		if err := s.Delete(id); err == nil {
			t.Errorf("Delete(%q) succeeded", id)
		}
	}
}

// TestDeadRunIsPartial: a record left running by a process that is gone lists as
// partial, and a torn last line of samples is skipped.
func TestDeadRunIsPartial(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	w, err := s.Create(benchProfile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.BenchRecord(0, rec("a", 2))
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	w.f.Write([]byte(`{"kind":"bench","key":1,"bench":{"model_fil`)) // torn
	w.f.Close()
	// Pretend the writer was another process that died.
	w.meta.PID = 1 << 30
	if err := w.writeMeta(); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Status != Partial || !list[0].Partial || !strings.Contains(list[0].Headline, "t/s") {
		t.Fatalf("dead run: %+v %v", list, err)
	}
	doc, err := s.Load(w.ID())
	if err != nil || !doc.Partial || len(doc.Bench.Records) != 1 || !doc.Bench.Records[0].Partial {
		t.Fatalf("load: %+v %v", doc.Bench, err)
	}
	// A live pid whose heartbeat stopped long ago is dead too.
	w.meta.PID = os.Getpid()
	w.writeMeta()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(s.Dir(), w.ID(), samplesFile), old, old)
	w.meta.Summary.Started = old
	w.writeMeta()
	if list, _ := s.List(); list[0].Status != Partial {
		t.Errorf("stale heartbeat: %v", list[0].Status)
	}
}

func TestStoreServing(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	sp := workloads.DefaultServe()
	sp.Dataset.NumPrompts = 3
	p := workloads.Job{Name: "s", Serve: &sp, Sweep: &workloads.Sweep{MaxConcurrency: []int{1, 2}}}
	w, err := s.Create(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(i int) metrics.Record {
		return metrics.Record{Index: i, PromptLen: 10, Expected: 4, Start: time.Duration(i) * time.Millisecond,
			TTFT: 5 * time.Millisecond, Latency: 20 * time.Millisecond, ITL: []time.Duration{5e6, 5e6, 5e6}, OutputTokens: 4, Success: true}
	}
	var results []*serving.Result
	for k, pt := range p.Points() {
		head := &serving.Result{Spec: pt, ModelID: "m"}
		w.Point(k, head)
		res := &serving.Result{Spec: pt, ModelID: "m", Duration: 100 * time.Millisecond}
		for i := range 3 {
			r := mk(i)
			w.Request(k, r)
			res.Records = append(res.Records, r)
		}
		res.Summary = serving.Summarize(res)
		results = append(results, res)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	mid, err := s.Load(w.ID())
	if err != nil || len(mid.Serving) != 2 || len(mid.Serving[1].Records) != 3 || mid.Serving[0].Summary.Completed != 3 || !mid.Partial {
		t.Fatalf("mid-run: %+v %v", mid.Serving, err)
	}
	if err := w.Finish(result.Document{Serving: results, Partial: true}, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := s.Load(w.ID())
	if err != nil || len(doc.Serving) != 2 || !doc.Partial {
		t.Fatalf("load: %+v %v", doc, err)
	}
	a, _ := json.Marshal(results[1].Summary)
	b, _ := json.Marshal(doc.Serving[1].Summary)
	if string(a) != string(b) {
		t.Errorf("summary not recomputed equal:\n%s\n%s", a, b)
	}
	list, _ := s.List()
	if list[0].Status != Partial || list[0].Kind != "serve-bench" {
		t.Errorf("list %+v", list[0])
	}
	// Save (the TUI's path) keeps a finished document with a profile to rerun.
	id, err := s.Save(result.Document{Title: "tui run", Serving: results[:1]})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := keptJob(t, s, id)
	if err != nil || pr.Serve == nil || pr.Serve.Dataset.NumPrompts != 3 {
		t.Errorf("saved profile %+v %v", pr, err)
	}
	list, _ = s.List()
	if len(list) != 2 || list[0].ID != id || list[0].Status != Done {
		t.Errorf("list after save %+v", list)
	}
}

func TestFailedRun(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	w, _ := s.Create(benchProfile(), nil)
	if err := w.Finish(result.Document{Bench: &micro.Result{}}, os.ErrNotExist); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if list[0].Status != Failed || !list[0].Partial || list[0].Error == "" {
		t.Errorf("failed: %+v", list[0])
	}
	// a run that failed before measuring anything lists as failed, with the reason,
	// as the kind and model the job named (it listed as type ? before)
	w, _ = s.Create(workloads.Job{Name: "x", Bench: &workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "/tmp/README.md"}}}}, nil)
	if err := w.Finish(result.Document{}, errors.New("/tmp/README.md: not a GGUF file")); err != nil {
		t.Fatal(err)
	}
	w2, _ := s.Create(workloads.Job{Name: "y", Serve: &workloads.ServeSpec{Backend: "openai", BaseURL: "http://127.0.0.1:9"}}, nil)
	if err := w2.Close(errors.New("connection refused")); err != nil {
		t.Fatal(err)
	}
	list, _ = s.List()
	for _, e := range list[:2] {
		switch e.ID {
		case w.ID():
			if !e.Failed || e.Kind != "bench" || e.Model != "README.md" || e.Headline != "failed: /tmp/README.md: not a GGUF file" {
				t.Errorf("failed bench listed as %+v", e.Summary)
			}
		case w2.ID():
			if !e.Failed || e.Kind != "serve-bench" || e.Model != "http://127.0.0.1:9" || e.Headline != "failed: connection refused" {
				t.Errorf("failed remote run listed as %+v", e.Summary)
			}
		default:
			t.Errorf("unexpected %s", e.ID)
		}
	}
}

// TestCloseWithoutResult: a record closed without a final document lists as partial
// (or failed) and loads from its samples.
func TestCloseWithoutResult(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	for _, runErr := range []error{nil, os.ErrDeadlineExceeded} {
		w, err := s.Create(benchProfile(), nil)
		if err != nil {
			t.Fatal(err)
		}
		w.BenchRecord(0, rec("a", 2))
		if err := w.Close(runErr); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(result.Document{}, nil); err == nil {
			t.Error("a closed record finished again")
		}
		m, err := s.readMeta(w.ID())
		want := Partial
		if runErr != nil {
			want = Failed
		}
		if err != nil || m.Status != want {
			t.Errorf("status %v %v; want %s", m, err, want)
		}
		doc, err := s.Load(w.ID())
		if err != nil || !doc.Partial || len(doc.Bench.Records) != 1 {
			t.Errorf("load: %+v %v", doc.Bench, err)
		}
	}
	list, _ := s.List()
	for _, e := range list {
		if !e.Partial || !strings.Contains(e.Headline, "t/s") {
			t.Errorf("entry %+v", e)
		}
	}
}

// TestConcurrentRequests: requests finish on many goroutines at once; every line
// lands whole.
func TestConcurrentRequests(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	sp := workloads.DefaultServe()
	w, err := s.Create(workloads.Job{Name: "c", Serve: &sp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Point(0, &serving.Result{Spec: sp, ModelID: "m"})
	const n = 400
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Request(0, metrics.Record{Index: i, Success: true, OutputTokens: 3, Text: strings.Repeat("x", i)})
		}()
	}
	wg.Wait()
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	doc, err := s.Load(w.ID())
	if err != nil || len(doc.Serving) != 1 || len(doc.Serving[0].Records) != n {
		t.Fatalf("load: %v, %+v", err, doc.Serving)
	}
	for i, r := range doc.Serving[0].Records {
		if r.Index != i || len(r.Text) != i {
			t.Fatalf("record %d: index %d, text %d bytes", i, r.Index, len(r.Text))
		}
	}
	w.Close(nil)
}

// TestWriterReportsWriteErrors: a sample that cannot reach the disk is an error of
// the record, reported by Sync and Finish, never dropped in silence; appending never
// waits for the disk.
func TestWriterReportsWriteErrors(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	w, err := s.Create(benchProfile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.f.Close() // every later write and sync fails
	w.mu.Unlock()
	w.BenchRecord(0, rec("a", 1))
	if err := w.Sync(); err == nil || !strings.Contains(err.Error(), "results store") {
		t.Fatalf("Sync after a failed write: %v", err)
	}
	if err := w.Finish(result.Document{}, nil); err == nil {
		t.Fatal("Finish hid the write error")
	}
}

// TestRequestNeverWaitsForTheDisk: recording a request returns at once even when the
// disk does not take the bytes (here a pipe nobody reads), so a serving run's
// concurrency slot is never held by the store; the stuck write is then reported.
func TestRequestNeverWaitsForTheDisk(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	sp := workloads.DefaultServe()
	w, err := s.Create(workloads.Job{Name: "slow disk", Serve: &sp}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.f.Close()
	w.f = pw // a pipe holds 64 KiB; nobody reads it
	w.mu.Unlock()
	rec := metrics.Record{Text: strings.Repeat("x", 4096), Success: true}
	done := make(chan struct{})
	go func() {
		for i := range 200 { // 800 KiB: far past what the pipe holds
			rec.Index = i
			w.Request(0, rec)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.Close()
		t.Fatal("Request waited for the disk")
	}
	r.Close() // the blocked write fails (broken pipe)
	if err := w.Finish(result.Document{}, nil); err == nil {
		t.Error("Finish did not report the failed write")
	}
}

// TestSyncErrorsAreReported: an fsync or close that fails at the end of a run is an
// error of Finish, not dropped.
func TestSyncErrorsAreReported(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	w, err := s.Create(benchProfile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.f.Close() // the samples file is gone under the writer: sync and close fail
	w.mu.Unlock()
	if err := w.Finish(result.Document{}, nil); err == nil {
		t.Fatal("Finish dropped the failed sync and close")
	}
}

// kernelsDoc is a finished kernel benchmark's document.
func kernelsDoc() (workloads.Job, result.Document) {
	spec := workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks, SeqLen: 256, Cases: []string{"causal"}}
	sec := kernelbench.Section{Title: "Causal Mask", Text: "box\ntable\n",
		Table: &kernelbench.Table{Columns: []string{"Operation", "FW Time (ms)"}, Numeric: []bool{false, true}, Rows: [][]string{{"block-sparse", "1.5"}}}}
	rep := &kernelbench.Report{Spec: spec.WithDefaults(), Sections: []kernelbench.Section{sec},
		Checks: []kernelbench.Check{{Name: "c", Pass: true, Detail: "d"}}, Notes: []string{"n"}, Data: json.RawMessage(`[{"mask":"causal"}]`)}
	return workloads.Job{Kernels: &spec}, result.Document{Kernels: rep}
}

// TestStoreKernels: a kernel run is kept section by section, loads back exactly once
// finished, rebuilds its sections (partial) from the samples when it never finished,
// and keeps its job to run again.
func TestStoreKernels(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	job, doc := kernelsDoc()
	w, err := s.Create(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.KernelSection(0, doc.Kernels.Sections[0])
	if err := w.Finish(doc, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(w.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got.Kernels != nil { // the store indents the suite's JSON
		var b bytes.Buffer
		if err := json.Compact(&b, got.Kernels.Data); err != nil {
			t.Fatal(err)
		}
		got.Kernels.Data = b.Bytes()
	}
	if got.Kernels == nil || got.Partial || !reflect.DeepEqual(got.Kernels, doc.Kernels) {
		t.Fatalf("loaded %+v, want %+v", got.Kernels, doc.Kernels)
	}
	if k, err := keptJob(t, s, w.ID()); err != nil || k.Kernels == nil || k.Kernels.SeqLen != 256 || k.Kind() != "kernels" {
		t.Fatalf("kept job %+v, %v", k, err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Kind != "kernels" || !strings.Contains(list[0].Headline, "checks 1/1 passed") {
		t.Errorf("history %+v", list)
	}

	w2, _ := s.Create(job, nil)
	w2.KernelSection(0, doc.Kernels.Sections[0])
	if err := w2.Close(nil); err != nil {
		t.Fatal(err)
	}
	part, err := s.Load(w2.ID())
	if err != nil || part.Kernels == nil || !part.Partial || len(part.Kernels.Sections) != 1 || part.Kernels.Sections[0].Title != "Causal Mask" {
		t.Fatalf("rebuilt %+v, %v", part.Kernels, err)
	}

	id, err := s.Save(doc)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := keptJob(t, s, id); err != nil || k.Kernels == nil || k.Kernels.Suite != workloads.SuiteAttentionMasks {
		t.Fatalf("saved job %+v, %v", k, err)
	}
}

// TestStoreBatch: a batch run is kept run by run, loads back exactly once finished,
// rebuilds its points (partial, the last sample of a point winning) when it never
// finished, and keeps its job to run again.
func TestStoreBatch(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	w1 := 1
	spec := workloads.BatchSpec{Model: workloads.BenchModel{Shape: "llama-tiny", Type: "Q8_0"}, SequenceLength: 16, DecodeLength: 4,
		BatchSize: []int{1, 2}, Runs: 2, Warmups: &w1}.WithDefaults()
	job := workloads.Job{Batch: &spec}
	run := micro.BatchRun{PrefillNs: 5e6, DecodeNs: 3e6, DecodeStepsNs: []int64{1e6, 1e6, 1e6}}
	head := micro.BatchResult{Spec: spec, Model: "synth:llama-tiny:Q8_0", Backend: "cpu", Threads: 2, Label: "CPU - 2 threads"}
	doc := result.Document{Title: "batch", Batch: &head}
	full := head
	full.Points = []micro.BatchPoint{{BatchSize: 1, Runs: []micro.BatchRun{run, run}}, {BatchSize: 2, Runs: []micro.BatchRun{run, run}}}
	doc.Batch = &full
	w, err := s.Create(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.BatchPoint(0, head, full.Points[0])
	if err := w.Finish(doc, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(w.ID())
	if err != nil || got.Batch == nil || got.Partial || !reflect.DeepEqual(got.Batch, doc.Batch) {
		t.Fatalf("loaded %+v, %v; want %+v", got.Batch, err, doc.Batch)
	}
	if k, err := keptJob(t, s, w.ID()); err != nil || k.Batch == nil || k.Kind() != "batch" || k.Batch.SequenceLength != 16 {
		t.Fatalf("kept job %+v, %v", k, err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Kind != "batch" || list[0].Model != "synth:llama-tiny:Q8_0" || !strings.Contains(list[0].Headline, "bs2 1.0 ms/tok") {
		t.Errorf("history %+v", list)
	}

	w2, _ := s.Create(job, nil)
	one := micro.BatchPoint{BatchSize: 1, Runs: []micro.BatchRun{run}}
	w2.BatchPoint(0, head, one)
	w2.BatchPoint(0, head, full.Points[0])
	w2.BatchPoint(1, head, micro.BatchPoint{BatchSize: 2, Runs: []micro.BatchRun{run}})
	if err := w2.Close(nil); err != nil {
		t.Fatal(err)
	}
	part, err := s.Load(w2.ID())
	if err != nil || part.Batch == nil || !part.IsPartial() || part.Batch.Label != "CPU - 2 threads" || len(part.Batch.Points) != 2 ||
		len(part.Batch.Points[0].Runs) != 2 || part.Batch.Points[0].Partial || len(part.Batch.Points[1].Runs) != 1 || !part.Batch.Points[1].Partial {
		t.Fatalf("rebuilt %+v, %v", part.Batch, err)
	}

	id, err := s.Save(doc)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := keptJob(t, s, id); err != nil || k.Batch == nil || k.Batch.Model.Shape != "llama-tiny" {
		t.Fatalf("saved job %+v, %v", k, err)
	}
}
