package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"llmbench/engine/synth"
	"llmbench/tui/internal/golden"
	"llmbench/workloads"
)

// throughputModel is Setup on the throughput workload (kind row → left: the last kind).
func throughputModel(t *testing.T) Model {
	m := at(t, newModel(), rowKind)
	m, _ = press(m, left)
	if m.kind != Throughput {
		t.Fatalf("left from bench gives %s, want throughput", m.kind)
	}
	return m
}

// sharegptFile is a dataset file that exists (Setup checks only that it does).
func sharegptFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "sharegpt.json")
	if err := os.WriteFile(p, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pickShape picks the synthetic shape name by ← → on the shape row and space.
func pickShape(t *testing.T, m Model, name string) Model {
	t.Helper()
	m = at(t, m, rowShape)
	for range m.shapes {
		if m.shapes[m.shape] == name {
			m, _ = press(m, space)
			return m
		}
		m, _ = press(m, right)
	}
	t.Fatalf("no shape %s", name)
	return m
}

// TestThroughputSetup: the fifth kind is JetStream's throughput run with its fields
// (weights types, KV cache type, batch size, cache/input/output lengths, prompts, the
// sharegpt file, threads): the CLI's defaults, refused values named inline, the
// q8_0 cache refused on a head size it cannot hold, the estimate (rows, tokens, memory
// per row, the rolling window on its own line), and the config round-trips through
// SetConfig.
func TestThroughputSetup(t *testing.T) {
	m := throughputModel(t)
	want := append([]string{rowBuiltin, rowShape, filePrefix + "testdata/tiny.gguf", rowPath}, throughputRows...)
	if !slices.Equal(m.rows(), want) {
		t.Fatalf("rows %v, want %v (no type row: the weights types give the rows)", m.rows(), want)
	}
	// no dataset file yet: refused, as the CLI does without --dataset-path
	if _, err := m.Config(); err == nil || err.Error() != "dataset path: give a sharegpt JSON file: type or paste its path" {
		t.Errorf("no dataset: %v", err)
	}
	if r, _ := press(m, enter); !strings.Contains(r.View(), "✗ cannot run: dataset path: give a sharegpt JSON file") {
		t.Errorf("enter without a dataset:\n%s", r.View())
	}
	ds := sharegptFile(t)
	m = set(t, m, rowShareGPT, ds)
	c := runConfig(t, m)
	if c.Kind != Throughput || c.Model.Path != Builtin || c.BatchSize != 16 || c.MaxCacheLength != 1024 || c.MaxInputLength != 1024 ||
		c.MaxOutputLength != 1024 || c.Prompts != 64 || c.DatasetPath != ds || c.WeightsTypes != nil || c.KVType != "" || c.PowerW != nil {
		t.Fatalf("default throughput config %+v", c)
	}
	if d := c.Describe(); d != "throughput · stories260K · batch 16 · cache 1024 · in 1024 out 1024 · 64 prompts" {
		t.Errorf("describe %q", d)
	}
	if n := c.ThroughputRowNames(); !slices.Equal(n, []string{"f32 / f16"}) {
		t.Errorf("builtin row %v", n)
	}
	for _, bad := range []struct{ row, v, want string }{
		{rowWeights, "BF16,Q8_0", "weight types: the built-in model keeps its F32 weights"},
		{rowWeights, "Q9_9", "weight types: "},
		{rowTBatch, "0", "batch size: a whole number ≥ 1"},
		{rowCacheLen, "x", "cache length: a whole number ≥ 1"},
		{rowMaxIn, "", "max input: a whole number ≥ 1"},
		{rowMaxOut, "-4", "max output: a whole number ≥ 1"},
		{rowNumPrompts, "0", "num prompts: a whole number ≥ 1"},
		{rowShareGPT, filepath.Join(t.TempDir(), "none.json"), "dataset path: no such file"},
		{rowThreads, "-1", "threads: a whole number ≥ 0"},
	} {
		b := set(t, m, bad.row, bad.v)
		if _, err := b.Config(); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%s %q: %v, want %q", bad.row, bad.v, err, bad.want)
		}
		// the error shows beside the field while it has the focus
		if v := b.View(); !strings.Contains(v, "✗ "+bad.want[:min(len(bad.want), 30)]) {
			t.Errorf("%s %q: no inline error:\n%s", bad.row, bad.v, b.View())
		}
	}

	// llama-tiny's head size (48) cannot hold a q8_0 cache: the int8 row is refused
	// on the kv cache row until it is f16
	m = pickShape(t, m, "llama-tiny")
	m = set(t, m, rowWeights, "q8_0")
	if _, err := m.Config(); err == nil || err.Error() != "kv cache: q8_0 needs a head size that is a multiple of 32 (llama-tiny: 48): pick f16" {
		t.Errorf("q8_0 KV on llama-tiny: %v", err)
	}
	m = at(t, m, rowKV)
	m, _ = press(m, right) // default ▸ f16
	c = runConfig(t, m)
	if c.Model != (workloads.BenchModel{Shape: "llama-tiny", Type: "BF16"}) || !slices.Equal(c.WeightsTypes, []string{"Q8_0"}) || c.KVType != "f16" {
		t.Fatalf("llama-tiny Q8_0 / f16: %+v", c)
	}
	if sp := c.ThroughputSpec(); sp.Model != "llama-tiny" || !slices.Equal(sp.KVCacheTypes, []string{"f16"}) || sp.Validate() != nil {
		t.Errorf("spec %+v", sp)
	}

	// llama-small, bfloat16 against int8, JetStream's table at our scale
	m = pickShape(t, m, "llama-small")
	m = at(t, m, rowKV)
	m, _ = press(m, left) // back to the default: q8_0 with Q8_0 weights
	for row, v := range map[string]string{rowWeights: "BF16,Q8_0", rowCacheLen: "512", rowMaxIn: "256", rowMaxOut: "512", rowNumPrompts: "32", rowThreads: "2"} {
		m = set(t, m, row, v)
	}
	c = runConfig(t, m)
	if n := c.ThroughputRowNames(); !slices.Equal(n, []string{"bfloat16", "int8"}) {
		t.Errorf("rows %v", n)
	}
	if d := c.Describe(); d != "throughput · llama-small BF16,Q8_0 · batch 16 · cache 512 · in 256 out 512 · 32 prompts" {
		t.Errorf("describe %q", d)
	}
	est := m.Estimate()
	// 2 rows × 32 prompts × 512 tokens = 32768; the memory as the engine sized it in
	// the jet runs (notes: 208.95 + 297.00 MiB, 111.04 + 157.78 MiB)
	for _, w := range []string{"Estimated: 2 rows × 32 prompts, batch 16 · 33k tokens out",
		"weights + KV: bfloat16 208.9 + 297.0 = 505.9 MiB · int8 111.0 + 157.8 = 268.8 MiB",
		"\nrolling window: cache 512 < input 256 + output 512 · each sequence keeps its last 512 positions"} {
		if !strings.Contains(est, w) {
			t.Errorf("estimate lacks %q:\n%s", w, est)
		}
	}
	if v := m.View(); !strings.Contains(v, "rolling window: cache 512 < input 256 + output 512") {
		t.Errorf("the rolling window line is not on screen:\n%s", v)
	}
	if e := set(t, m, rowCacheLen, "1024").Estimate(); !strings.Contains(e, "\nno rolling window: cache 1024 ≥ input 256 + output 512 · every sequence fits whole") {
		t.Errorf("cache 1024: %s", e)
	}

	// SetConfig shows it as set up by hand
	n := newModel()
	n.SetConfig(c)
	if n.kind != Throughput || n.focused() == "" {
		t.Fatalf("SetConfig kind %s", n.kind)
	}
	if got, err := n.Config(); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("SetConfig round trip %+v, %v; want %+v", got, err, c)
	}
}

// TestThroughputMemory: the weights and KV pool Setup says each row needs are the
// figures the engine reported in real runs (the jet notes: llama-small BF16/f16 and
// Q8_0/q8_0 at batch 16, cache 512 < 256 + 512; llama-tiny Q8_0/f16 at cache 512
// and 1024).
func TestThroughputMemory(t *testing.T) {
	mib := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1<<20)) }
	for _, c := range []struct {
		shape, weights, kv string
		cache              int
		wantW, wantKV      string
	}{
		{"llama-small", "BF16", "f16", 512, "208.95", "297.00"},
		{"llama-small", "Q8_0", "q8_0", 512, "111.04", "157.78"},
		{"llama-tiny", "Q8_0", "f16", 512, "15.40", "55.69"},
		{"llama-tiny", "Q8_0", "f16", 1024, "15.40", "108.00"},
	} {
		sh, err := synth.Lookup(c.shape)
		if err != nil {
			t.Fatal(err)
		}
		sp := workloads.ThroughputSpec{BatchSize: 16, MaxCacheLength: c.cache, MaxInputLength: 256, MaxOutputLength: 512}
		w, kv, ok := throughputMemory(sp, sh, workloads.ThroughputRow{Weights: c.weights, KV: c.kv})
		if !ok || mib(w) != c.wantW || mib(kv) != c.wantKV {
			t.Errorf("%s %s/%s cache %d: weights %s MiB, KV %s MiB (%v); want %s, %s", c.shape, c.weights, c.kv, c.cache, mib(w), mib(kv), ok, c.wantW, c.wantKV)
		}
	}
}

// TestThroughputGolden: the throughput workload at every size (JetStream's pair on
// llama-small; the dataset a fixed path so the goldens do not move).
func TestThroughputGolden(t *testing.T) {
	m := newModel()
	m.SetConfig(Config{Kind: Throughput, Model: workloads.BenchModel{Shape: "llama-small", Type: "BF16"}, WeightsTypes: []string{"BF16", "Q8_0"},
		BatchSize: 16, MaxCacheLength: 512, MaxInputLength: 256, MaxOutputLength: 512, Prompts: 32, DatasetPath: "testdata/sharegpt.json"})
	m = at(t, m, rowWeights)
	for _, sz := range golden.Sizes {
		v := m
		v.SetSize(sz[0], sz[1]-3)
		golden.Assert(t, fmt.Sprintf("throughput_%dx%d", sz[0], sz[1]), v.View())
	}
}

// TestThroughputRowNames: rows are named as JetStream's table names them before the
// run, from the model's own weights where a row keeps them.
func TestThroughputRowNames(t *testing.T) {
	for _, c := range []struct {
		spec workloads.ThroughputSpec
		want []string
	}{
		{workloads.ThroughputSpec{Model: "llama-small"}, []string{"bfloat16"}},
		{workloads.ThroughputSpec{Model: "llama-small", WeightsTypes: []string{"BF16", "Q8_0", "q4_0"}}, []string{"bfloat16", "int8", "q4_0 / f16"}},
		{workloads.ThroughputSpec{Model: "synth:llama-tiny:Q8_0", KVCacheTypes: []string{"f16"}}, []string{"q8_0 / f16"}},
		{workloads.ThroughputSpec{Model: ""}, []string{"f32 / f16"}},
		{workloads.ThroughputSpec{Model: "/models/m.gguf"}, []string{"own / f16"}},
		{workloads.ThroughputSpec{Model: "/models/m.gguf", WeightsTypes: []string{"F16"}}, []string{"float16"}},
	} {
		if got := ThroughputRowNames(c.spec); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.spec, got, c.want)
		}
	}
}
