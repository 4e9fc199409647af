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

// specConfig is the published speculative-decoding setup as Setup makes it: spec-base
// Q8_0 with its draft in Q8_0, --draft-max 24 --draft-min 1 --draft-p-min 0.6.
func specConfig() setup.Config {
	return setup.Config{Kind: setup.Serve, Model: workloads.BenchModel{Shape: "spec-base", Type: "Q8_0"}, Dataset: "random", Prompts: 16,
		InputLen: 64, OutputLen: 128, Concurrency: []int{1}, Rate: []float64{math.Inf(1)}, Threads: 2,
		Draft: workloads.BenchModel{Shape: "spec-base-draft", Type: "Q8_0"}, DraftMax: 24, DraftMin: 1, DraftPMin: 0.6}
}

// TestDraftProfileRoundTrip: Setup's draft model and settings are the job's engine
// keys (draft, draft_type, draft_max, draft_min, draft_p_min), a saved profile passes
// the profile checks and reads back into the same Setup, for every kind of draft;
// a profile that leaves the draft's type and settings to their defaults opens with
// the defaults shown; drafts Setup cannot show are refused with the reason, in one
// line; builtin:spec-decode-ab (two runs) is refused, while the draft of its second
// run is one Setup shows.
func TestDraftProfileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "draft.gguf")
	if err := os.WriteFile(file, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := specConfig()
	p := ProfileOf(spec)
	want := workloads.EngineSpec{Draft: "spec-base-draft", DraftType: "Q8_0", DraftMax: 24, DraftMin: 1, DraftPMin: 0.6}
	if got := p.Runs[0].Serve.Engine; !reflect.DeepEqual(got, want) {
		t.Errorf("engine of the job: %+v, want %+v", got, want)
	}
	for _, d := range []struct {
		draft      workloads.BenchModel
		max, min   int
		pmin       float64
		draftKey   string
		draftType  string
		pminStored float64
	}{
		{workloads.BenchModel{Shape: "spec-base-draft", Type: "Q8_0"}, 24, 1, 0.6, "spec-base-draft", "Q8_0", 0.6},
		{workloads.BenchModel{Shape: "spec-tiny-draft", Type: "F16"}, 4, 0, 0.75, "spec-tiny-draft", "F16", 0.75},
		{workloads.BenchModel{Path: setup.Builtin}, 16, 16, -1, setup.Builtin, "", -1},
		{workloads.BenchModel{Path: file}, 8, 2, 1, file, "", 1},
	} {
		c := spec
		c.Draft, c.DraftMax, c.DraftMin, c.DraftPMin = d.draft, d.max, d.min, d.pmin
		path := filepath.Join(dir, "p.yaml")
		if err := saver(c, path); err != nil {
			t.Fatal(err)
		}
		loaded, err := profiles.LoadFile(path)
		if err != nil {
			t.Fatalf("draft %+v: the profile Setup saved does not load: %v", d.draft, err)
		}
		e := loaded.Runs[0].Serve.Engine
		if e.Draft != d.draftKey || e.DraftType != d.draftType || e.DraftMax != d.max || e.DraftMin != d.min || e.DraftPMin != d.pminStored {
			t.Errorf("draft %+v: saved engine %+v", d.draft, e)
		}
		back, err := ConfigOf(loaded)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("draft %+v: ConfigOf = %+v, %v", d.draft, back, err)
		}
	}

	// defaults left to the engine: shown as its defaults; the model's type for the
	// draft's; any negative p-min is "never stop early"
	bare := ProfileOf(spec)
	bare.Runs[0].Serve.Engine = workloads.EngineSpec{Draft: "spec-base-draft"}
	got, err := ConfigOf(&bare)
	if err != nil || got.Draft != spec.Draft || got.DraftMax != 16 || got.DraftMin != 0 || got.DraftPMin != 0.75 {
		t.Errorf("a draft with its defaults: %+v (max %d min %d p-min %g), %v", got.Draft, got.DraftMax, got.DraftMin, got.DraftPMin, err)
	}
	for _, id := range []string{"stories260K", "synth:spec-base-draft:Q8_0"} {
		bare.Runs[0].Serve.Engine = workloads.EngineSpec{Draft: id, DraftPMin: -0.5}
		if got, err := ConfigOf(&bare); err != nil || got.Draft == (workloads.BenchModel{}) || got.DraftPMin != -1 {
			t.Errorf("draft %s: %+v, %v", id, got, err)
		}
	}

	for _, bad := range []struct {
		engine workloads.EngineSpec
		remote bool
		want   string
	}{
		{workloads.EngineSpec{Draft: "llama-tiny", DraftType: "Q8_0"}, false, "the draft llama-tiny is a synthetic shape Setup does not offer as a draft (it offers spec-tiny-draft, spec-base-draft)"},
		{workloads.EngineSpec{Draft: file, DraftType: "Q8_0"}, false, "the draft " + file + " is a file, whose draft_type Q8_0 Setup does not show"},
		{workloads.EngineSpec{Draft: "spec-base-draft", DraftType: "Q3_K"}, false, "the draft spec-base-draft Q3_K is not one Setup shows"},
		{workloads.EngineSpec{Draft: "spec-base-draft"}, true, "the serve run sets more than Setup shows"},
	} {
		c := spec
		if bad.remote {
			c.Backend, c.URL, c.Model, c.Draft = "openai", "http://127.0.0.1:8000", workloads.BenchModel{}, workloads.BenchModel{}
		}
		p := ProfileOf(c)
		p.Runs[0].Serve.Engine = bad.engine
		if _, err := ConfigOf(&p); err == nil || !strings.HasPrefix(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("engine %+v: %v, want %q…", bad.engine, err, bad.want)
		}
	}

	ab, err := profiles.Builtin("spec-decode-ab")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigOf(ab); err == nil || !strings.HasPrefix(err.Error(), "the profile has several runs: Setup holds one") {
		t.Errorf("builtin:spec-decode-ab in Setup: %v", err)
	}
	c, err := draftConfig(spec, *ab.Runs[1].Serve)
	if err != nil || c.Draft != spec.Draft || c.DraftMax != 24 || c.DraftMin != 1 || c.DraftPMin != 0.6 {
		t.Errorf("spec-decode-ab's draft as Setup shows it: %+v, %v", c, err)
	}
}

// TestSetupDraftSaveOpen: the draft set up on Setup goes through s (a profile file)
// and o (read back after a change) unchanged, keys and all.
func TestSetupDraftSaveOpen(t *testing.T) {
	m := newRootWith(Options{SaveProfile: saver})
	m.setup.SetConfig(specConfig())
	want, err := m.setup.Config()
	if err != nil || !reflect.DeepEqual(want, specConfig()) {
		t.Fatalf("Setup shows %+v, %v", want, err)
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	m = keys(t, m, "s")
	m = typePath(t, m, path)
	if !strings.Contains(m.Render(), "✓ profile saved to "+path) {
		t.Fatalf("save:\n%s", m.Render())
	}
	m = keys(t, m, "down", "down", "down", "down", "left", "left") // draft model: ◂ the built-in model
	if c, _ := m.setup.Config(); c.Draft != (workloads.BenchModel{Path: setup.Builtin}) {
		t.Fatalf("not changed: %+v", c.Draft)
	}
	m = keys(t, m, "o", "enter")
	if got, err := m.setup.Config(); err != nil || !reflect.DeepEqual(got, want) || m.Err() != "" {
		t.Errorf("opened %+v (%v, %q), want %+v", got, err, m.Err(), want)
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
