package tui

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"llmbench/profiles"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
)

// saver writes profiles as main does.
func saver(c setup.Config, path string) error { return profiles.Save(path, ProfileOf(c)) }

// typePath replaces the text of the open prompt with path and presses enter.
func typePath(t *testing.T, m Model, path string) Model {
	t.Helper()
	return keys(t, m, append(append([]string{"ctrl+u"}, strings.Split(path, "")...), "enter")...)
}

// TestSetupSaveOpen: s on Setup writes what is set up as a profile (the default
// path offered, where it went shown); o reads it back into Setup after a change.
func TestSetupSaveOpen(t *testing.T) {
	m := newRootWith(Options{SaveProfile: saver})
	m = keys(t, m, "down", "down", "down", "down", "down", "backspace", "backspace", "backspace", "6", "4") // pp 64
	want, err := m.setup.Config()
	if err != nil {
		t.Fatal(err)
	}
	m = keys(t, m, "up", "s") // s from the workload row (on a field it types)
	out := m.Render()
	if !strings.Contains(out, "save profile to: ./bench-stories260K.yaml_") || !strings.Contains(out, "enter write") {
		t.Fatalf("s does not offer a path:\n%s", out)
	}
	if !m.capturing() {
		t.Error("the path prompt does not take q and tab as text")
	}
	path := filepath.Join(t.TempDir(), "mine.yaml")
	m = typePath(t, m, path)
	if m.Err() != "" || !strings.Contains(m.Render(), "✓ profile saved to "+path) {
		t.Fatalf("save: %q\n%s", m.Err(), m.Render())
	}
	if p, err := profiles.LoadFile(path); err != nil || p.Runs[0].Bench == nil || p.Runs[0].Bench.Prompt[0] != 64 {
		t.Fatalf("the profile written: %+v %v", p, err)
	}

	m = keys(t, m, "right") // workload ▸ serve-bench (left: batch)
	if c, _ := m.setup.Config(); c.Kind != setup.Serve {
		t.Fatalf("not changed to serve-bench: %+v", c)
	}
	m = keys(t, m, "o")
	if out := m.Render(); !strings.Contains(out, "open profile: "+path+"_") || !strings.Contains(out, "enter open") {
		t.Fatalf("o does not offer the last path:\n%s", out)
	}
	m = keys(t, m, "enter")
	got, err := m.setup.Config()
	if err != nil || !reflect.DeepEqual(got, want) || m.Err() != "" || !strings.Contains(m.Render(), "✓ opened "+path) {
		t.Errorf("opened %+v (%v, %q), want %+v\n%s", got, err, m.Err(), want, m.Render())
	}

	m = keys(t, m, "s", "esc")
	if !strings.Contains(m.Render(), " cancelled") {
		t.Errorf("esc does not cancel:\n%s", m.Render())
	}

	m = keys(t, m, "down", "down", "down", "backspace", "up", "up", "up", "s") // reps empty; s from a choice row
	if out := m.Render(); !strings.Contains(out, "✗ cannot save: reps: a whole number ≥ 1") || strings.Contains(out, "save profile to") {
		t.Errorf("s with a bad field:\n%s", out)
	}
}

// TestSetupOpenBad: a profile with a mistake, or one Setup cannot hold, leaves Setup
// as it was and says why on the error line, in one line.
func TestSetupOpenBad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("schema: 1\nbench:\n  models: [{path: builtin:stories260K}]\n  n_promt: [64]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(sweep, []byte("schema: 1\nbench:\n  models: [{path: builtin:stories260K}]\n  n_prompt: [64, 128]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, parseErr := profiles.LoadFile(bad)
	if parseErr == nil {
		t.Fatal("the bad profile parses")
	}
	for _, c := range []struct{ path, want string }{
		{bad, parseErr.Error()},
		{sweep, sweep + ": the bench lists several values: Setup holds one bench"},
		{filepath.Join(dir, "none.yaml"), "none.yaml: no such file"},
	} {
		m := newRootWith(Options{SaveProfile: saver})
		before, _ := m.setup.Config()
		m = keys(t, m, "o")
		m = typePath(t, m, c.path)
		if !strings.Contains(m.Err(), c.want) || strings.Contains(m.Err(), "\n") {
			t.Errorf("%s: error line %q, want %q…", c.path, m.Err(), c.want)
		}
		if !strings.Contains(m.Render(), "✗ "+m.Err()[:20]) {
			t.Errorf("%s: error not shown:\n%s", c.path, m.Render())
		}
		if after, _ := m.setup.Config(); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: Setup changed to %+v", c.path, after)
		}
	}
}

// TestEverySweepPointWarmsUp: a Setup sweep is the job's sweep, and every point of it
// sends warm-up requests before its clock starts (the first point used to take the
// cold start alone).
func TestEverySweepPointWarmsUp(t *testing.T) {
	c := setup.Config{Kind: setup.Serve, Model: workloads.BenchModel{Path: setup.Builtin}, Dataset: "random", Prompts: 4,
		InputLen: 16, OutputLen: 8, Concurrency: []int{1, 4}, Rate: []float64{math.Inf(1)}}
	r := ProfileOf(c).Runs[0]
	pts := r.Points()
	if len(pts) != 2 {
		t.Fatalf("%d points", len(pts))
	}
	for _, p := range pts {
		if p.NumWarmups < 1 {
			t.Errorf("point c=%d: no warm-up", p.MaxConcurrency)
		}
	}
}

// TestKernelsProfile: a kernels Setup config is a profile of one kernels run (the
// job the Starter runs) and reads back into the same config; the built-in
// attention-masks and paged-attention profiles open in Setup; a kernels run that
// sets what Setup does not show (a window, --check) is refused with the reason.
func TestKernelsProfile(t *testing.T) {
	masks := setup.Config{Kind: setup.Kernels, PowerW: []float64{300}, Kernel: workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks,
		Cases: []string{"causal"}, SeqLen: 512, Heads: 2, HeadDim: 32, BlockSize: 64, Threads: 2, Reps: 1}.WithDefaults()}
	paged := setup.Config{Kind: setup.Kernels, Kernel: workloads.KernelSpec{Suite: workloads.SuitePagedAttention, Cases: []string{"decode-long"}, Reps: 3}}
	for _, c := range []setup.Config{masks, paged} {
		p := ProfileOf(c)
		r := p.Runs[0]
		if len(p.Runs) != 1 || r.Kernels == nil || r.Bench != nil || r.Serve != nil || !reflect.DeepEqual(*r.Kernels, c.Kernel) ||
			!reflect.DeepEqual(r.PowerLimitW, c.PowerW) || r.Kind() != "kernels" {
			t.Fatalf("profile of %+v: %+v", c, r)
		}
		back, err := ConfigOf(&p)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("round trip of %+v: %+v, %v", c.Kernel, back, err)
		}
	}
	for _, name := range []string{"attention-masks", "paged-attention"} {
		p, err := profiles.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ConfigOf(p)
		if err != nil || c.Kind != setup.Kernels || c.Kernel.Suite != name {
			t.Errorf("builtin:%s in Setup: %+v, %v", name, c, err)
		}
		if got := ProfileOf(c).Runs[0].Kernels.WithDefaults(); !reflect.DeepEqual(got, p.Runs[0].Kernels.WithDefaults()) {
			t.Errorf("builtin:%s: Setup runs %+v, the profile %+v", name, got, p.Runs[0].Kernels.WithDefaults())
		}
	}
	for _, k := range []workloads.KernelSpec{
		{Suite: workloads.SuiteAttentionMasks, Window: 64},
		{Suite: workloads.SuitePagedAttention, Check: true},
	} {
		p := profiles.Profile{Runs: []profiles.Run{{Kernels: &k}}}
		if _, err := ConfigOf(&p); err == nil || !strings.Contains(err.Error(), "Setup") {
			t.Errorf("%+v opened in Setup: %v", k, err)
		}
	}
}

// TestBatchProfileRoundTrip: a Setup batch run is a profile of one batch job, and
// ConfigOf gives the same Setup back; a batch run that sets more than Setup shows
// (a label, sampling) is refused in one line.
func TestBatchProfileRoundTrip(t *testing.T) {
	c := setup.Config{Kind: setup.Batch, Model: workloads.BenchModel{Shape: "llama-1b", Type: "Q4_0"}, SequenceLength: 128, DecodeLength: 8,
		BatchSizes: []int{1, 4}, Reps: 3, Threads: 2}
	p := ProfileOf(c)
	if len(p.Runs) != 1 || p.Runs[0].Kind() != "batch" || p.Runs[0].Batch.Runs != 3 || p.Runs[0].Batch.Model.Shape != "llama-1b" {
		t.Fatalf("profile %+v", p.Runs)
	}
	got, err := ConfigOf(&p)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("ConfigOf = %+v, %v; want %+v", got, err, c)
	}
	p.Runs[0].Batch.Label = "TP 2"
	if _, err := ConfigOf(&p); err == nil || !strings.Contains(err.Error(), "the batch run sets more than Setup shows") {
		t.Errorf("a labelled batch run: %v", err)
	}
}

// TestThroughputProfileRoundTrip: a Setup throughput run is a profile of one
// throughput job (the spec `llmbench throughput` runs) and ConfigOf gives the same
// Setup back; builtin:jetstream-throughput opens in Setup as it is; a throughput run
// that sets what Setup does not show (a KV type per row, a seed, power limits, a
// synth:SHAPE:TYPE model) is refused in one line.
func TestThroughputProfileRoundTrip(t *testing.T) {
	c := setup.Config{Kind: setup.Throughput, Model: workloads.BenchModel{Shape: "llama-small", Type: "BF16"}, WeightsTypes: []string{"BF16", "Q8_0"},
		KVType: "f16", BatchSize: 8, MaxCacheLength: 256, MaxInputLength: 128, MaxOutputLength: 256, Prompts: 16, DatasetPath: "/data/sharegpt.json", Threads: 2}
	p := ProfileOf(c)
	r := p.Runs[0]
	want := workloads.ThroughputSpec{Model: "llama-small", WeightsTypes: []string{"BF16", "Q8_0"}, KVCacheTypes: []string{"f16"}, BatchSize: 8,
		MaxCacheLength: 256, MaxInputLength: 128, MaxOutputLength: 256, NumPrompts: 16, DatasetPath: "/data/sharegpt.json", Threads: 2}
	if len(p.Runs) != 1 || r.Kind() != "throughput" || r.Serve != nil || !reflect.DeepEqual(*r.Throughput, want) || r.Name != c.Describe() {
		t.Fatalf("profile %+v", r)
	}
	if got, err := ConfigOf(&p); err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("ConfigOf = %+v, %v; want %+v", got, err, c)
	}
	builtinCfg := setup.Config{Kind: setup.Throughput, Model: workloads.BenchModel{Path: setup.Builtin}, BatchSize: 4, MaxCacheLength: 64,
		MaxInputLength: 32, MaxOutputLength: 16, Prompts: 8, DatasetPath: "x.json"}
	bp := ProfileOf(builtinCfg)
	if bp.Runs[0].Throughput.Model != workloads.BuiltinModel {
		t.Errorf("builtin model %q", bp.Runs[0].Throughput.Model)
	}
	if got, err := ConfigOf(&bp); err != nil || !reflect.DeepEqual(got, builtinCfg) {
		t.Errorf("builtin ConfigOf = %+v, %v", got, err)
	}

	jp, err := profiles.Builtin("jetstream-throughput")
	if err != nil {
		t.Fatal(err)
	}
	jc, err := ConfigOf(jp)
	if err != nil || jc.Kind != setup.Throughput || jc.Model.Shape != "llama-small" || !slices.Equal(jc.ThroughputRowNames(), []string{"bfloat16", "int8"}) ||
		jc.BatchSize != 16 || jc.MaxCacheLength != 512 || jc.MaxInputLength != 256 || jc.MaxOutputLength != 512 || jc.Prompts != 32 {
		t.Fatalf("builtin:jetstream-throughput in Setup: %+v, %v", jc, err)
	}
	if got := ProfileOf(jc).Runs[0].Throughput; !reflect.DeepEqual(*got, *jp.Runs[0].Throughput) {
		t.Errorf("builtin:jetstream-throughput: Setup runs %+v, the profile %+v", *got, *jp.Runs[0].Throughput)
	}

	for name, edit := range map[string]func(r *profiles.Run){
		"a KV type per row": func(r *profiles.Run) { r.Throughput.KVCacheTypes = []string{"f16", "q8_0"} },
		"a seed":            func(r *profiles.Run) { r.Throughput.Seed = 7 },
		"power limits":      func(r *profiles.Run) { r.PowerLimitW = []float64{200} },
		"synth:SHAPE:TYPE":  func(r *profiles.Run) { r.Throughput.Model = "synth:llama-small:Q4_0" },
	} {
		q := ProfileOf(c)
		tp := *q.Runs[0].Throughput
		q.Runs[0].Throughput = &tp
		edit(&q.Runs[0])
		if _, err := ConfigOf(&q); err == nil || !strings.Contains(err.Error(), "the throughput run sets more than Setup shows") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
