package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/store"
)

// writeShareGPT writes n two-turn conversations whose prompts are long enough to be
// cut to any small input limit.
func writeShareGPT(t *testing.T, n int) string {
	t.Helper()
	var convs []string
	for i := range n {
		p := strings.Repeat(fmt.Sprintf("once upon a time a little cat number %d went to the market. ", i), 1+i%3)
		convs = append(convs, fmt.Sprintf(`{"conversations":[{"from":"human","value":%q},{"from":"gpt","value":"it was a good day"}]}`, p))
	}
	path := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(path, []byte("["+strings.Join(convs, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestThroughputRollingWindow runs the same throughput job on the built-in model with a
// cache shorter than input + output (the rolling window is used, every sequence rolls)
// and with one that holds them (it is not), and checks each row: every request
// finished with the output limit, the KV pool is the batch's rings or whole caches, the
// row says whether the window was used, the table prints JetStream's columns, and the
// run is kept with its rows.
func TestThroughputRollingWindow(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := writeShareGPT(t, 6)
	e, err := engine.LoadBytes(context.Background(), "builtin", builtin.Stories260K, engine.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	bpt := e.Model.KVBytesPerToken(kernels.F16)
	e.Close()
	for _, c := range []struct {
		cache  int
		window bool
	}{{32, true}, {64, false}} {
		t.Run(fmt.Sprintf("cache%d", c.cache), func(t *testing.T) {
			spec := workloads.ThroughputSpec{Model: workloads.BuiltinModel, BatchSize: 2, MaxCacheLength: c.cache, MaxInputLength: 16,
				MaxOutputLength: 40, NumPrompts: 6, DatasetPath: data, Threads: 1}
			job := workloads.Job{Throughput: &spec, Device: "none"}
			o := Options{Device: dev, Store: st, Build: "test", Headless: true}
			if err := Check(job, o); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			stored, err := Headless(context.Background(), job, o, Terminal{Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			tp := stored.Doc.Throughput
			if tp == nil || len(tp.Rows) != 1 || len(stored.Doc.Serving) != 1 {
				t.Fatalf("document %+v", stored.Doc)
			}
			r := tp.Rows[0]
			res := stored.Doc.Serving[0]
			if r.Completed != 6 || r.Requests != 6 || res.Summary.TotalOutput != 6*40 {
				t.Errorf("%d of %d finished, %d output tokens; want 6 of 6 and %d", r.Completed, r.Requests, res.Summary.TotalOutput, 6*40)
			}
			for _, rec := range res.Records {
				if rec.PromptLen > 16+1 {
					t.Errorf("a prompt of %d tokens passed the input limit of 16", rec.PromptLen)
				}
			}
			bs := engine.DefaultBlockSize
			perSeq := c.cache
			if c.window {
				perSeq = engine.WindowBlocks(c.cache, bs) * bs
			}
			if want := int64(2*perSeq) * bpt; r.KVBytes != want {
				t.Errorf("KV pool of %d bytes, want 2 sequences of %d positions (%d bytes)", r.KVBytes, perSeq, want)
			}
			if c.window {
				if r.RollingWindow != c.cache || r.Rolled != 6 {
					t.Errorf("window %d, %d sequences rolled; want %d and all 6", r.RollingWindow, r.Rolled, c.cache)
				}
			} else if r.RollingWindow != 0 || r.Rolled != 0 {
				t.Errorf("window %d, %d rolled with a cache that holds input + output", r.RollingWindow, r.Rolled)
			}
			text := out.String()
			used := "used: last 32 positions (cache 32 < 16 + 40), 6 sequences rolled"
			if !c.window {
				used = "not used (cache 64 ≥ 16 + 40)"
			}
			for _, want := range []string{"Date | Device  | dtype | batch size | cache length |max input length |max output length| throughput (token/s)",
				fmt.Sprintf("| f32 / f16 | 2 | %d | 16 | 40 | ", c.cache), used, "6 of 6 finished"} {
				if !strings.Contains(text, want) {
					t.Errorf("output lacks %q:\n%s", want, text)
				}
			}
			doc, err := st.Load(stored.ID)
			if err != nil || doc.Throughput == nil || doc.Throughput.Rows[0] != r {
				t.Errorf("the store holds %+v, %v", doc.Throughput, err)
			}
		})
	}
}

// TestThroughputRefusals: bad settings are refused by Check in one line, before anything runs.
func TestThroughputRefusals(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	data := writeShareGPT(t, 2)
	good := workloads.ThroughputSpec{Model: "llama-tiny", BatchSize: 2, MaxCacheLength: 32, MaxInputLength: 16, MaxOutputLength: 8, NumPrompts: 2, DatasetPath: data}
	for _, c := range []struct {
		edit func(*workloads.ThroughputSpec)
		want string
	}{
		{func(s *workloads.ThroughputSpec) { s.BatchSize = 0 }, "--batch-size"},
		{func(s *workloads.ThroughputSpec) { s.MaxCacheLength = -1 }, "--max-cache-length"},
		{func(s *workloads.ThroughputSpec) { s.DatasetPath = "" }, "--dataset-path"},
		{func(s *workloads.ThroughputSpec) { s.DatasetPath = "/nonexistent.json" }, "not a readable file"},
		{func(s *workloads.ThroughputSpec) { s.WeightsTypes = []string{"Q9"} }, "--weights-type"},
		{func(s *workloads.ThroughputSpec) { s.KVCacheTypes = []string{"bf16"} }, "--kv-cache-type"},
		{func(s *workloads.ThroughputSpec) {
			s.WeightsTypes, s.KVCacheTypes = []string{"BF16"}, []string{"f16", "q8_0"}
		}, "one per --weights-type"},
		{func(s *workloads.ThroughputSpec) { s.Model, s.WeightsTypes = workloads.BuiltinModel, []string{"Q8_0"} }, "built-in model keeps"},
		{func(s *workloads.ThroughputSpec) { s.Model = "no-such-shape" }, "not a file and not a synthetic shape"},
	} {
		s := good
		c.edit(&s)
		err := Check(workloads.Job{Throughput: &s}, Options{Device: dev})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", s, err, c.want)
		}
	}
	if err := Check(workloads.Job{Throughput: &good}, Options{Device: dev}); err != nil {
		t.Errorf("good spec refused: %v", err)
	}
}
