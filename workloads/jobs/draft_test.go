package jobs

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"llmbench/workloads"
	"llmbench/workloads/store"
)

// TestDraftChecks: Check refuses a draft whose settings or model are bad, a draft
// for an HTTP backend, and a draft with another vocabulary (at load, in one line).
func TestDraftChecks(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(f func(*workloads.ServeSpec)) workloads.Job {
		sp := workloads.DefaultServe()
		f(&sp)
		return workloads.Job{Serve: &sp}
	}
	cases := []struct {
		job  workloads.Job
		want string
	}{
		{serve(func(s *workloads.ServeSpec) { s.Engine.Draft = "no-such-draft" }), "draft"},
		{serve(func(s *workloads.ServeSpec) { s.Engine.Draft, s.Engine.DraftType = "spec-tiny-draft", "Q9_9" }), "Q9_9"},
		{serve(func(s *workloads.ServeSpec) {
			s.Engine.Draft, s.Engine.DraftMin, s.Engine.DraftMax = "spec-tiny-draft", 5, 2
		}), "--draft-min"},
		{serve(func(s *workloads.ServeSpec) { s.Engine.Draft, s.Engine.DraftPMin = "spec-tiny-draft", 2 }), "--draft-p-min"},
		{serve(func(s *workloads.ServeSpec) {
			s.Backend, s.BaseURL, s.Engine.Draft = "openai", "http://127.0.0.1:1", "spec-tiny-draft"
		}), "--backend inproc"},
	}
	for i, c := range cases {
		if err := Check(c.job, Options{Device: dev}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: Check = %v; want an error naming %q", i, err, c.want)
		}
	}
	// A synthetic draft needs a type: its own, else the model's.
	if _, _, err := DraftRef(workloads.EngineSpec{Draft: "spec-tiny-draft"}, ""); err == nil || !strings.Contains(err.Error(), "--draft-type") {
		t.Errorf("untyped synthetic draft: %v", err)
	}
	m, ok, err := DraftRef(workloads.EngineSpec{Draft: "spec-tiny-draft"}, "Q8_0")
	if !ok || err != nil || ModelID(m) != "synth:spec-tiny-draft:Q8_0" {
		t.Errorf("draft with the model's type: %+v %v %v", m, ok, err)
	}
}

// TestServeWithDraft runs a small serving job on the synthetic pair through Headless:
// the vLLM block reports the acceptance rate and tokens per step, the stored result
// keeps the draft counters and the draft's memory, and requests carry chunks of
// several tokens.
func TestServeWithDraft(t *testing.T) {
	dev, err := OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := store.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp := workloads.DefaultServe()
	sp.Model, sp.SyntheticType, sp.Threads, sp.IgnoreEOS = "spec-tiny", "Q8_0", 2, true
	sp.Dataset.NumPrompts, sp.Dataset.RandomInputLen, sp.Dataset.RandomOutputLen = 8, 16, 48
	sp.Engine = workloads.EngineSpec{Draft: "spec-tiny-draft", DraftMax: 24, DraftMin: 1, DraftPMin: 0.6}
	var out, errb bytes.Buffer
	stored, err := Headless(context.Background(), workloads.Job{Serve: &sp}, Options{Device: dev, Store: st, CacheDir: dir, Build: "test"},
		Terminal{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"Draft acceptance rate (%):", "Tokens per model step:", "Draft memory (MiB):"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q line:\n%s", want, out.String())
		}
	}
	res := stored.Doc.Serving[0]
	e := res.Engine
	if e == nil || e.DraftedTokens == 0 || e.AcceptedTokens == 0 || e.DraftWeightBytes == 0 || e.DraftKVBytes == 0 || e.WeightBytes == 0 {
		t.Fatalf("engine stats %+v", e)
	}
	if tps := e.TokensPerStep(); tps <= 1 || e.MemoryBytes() <= e.WeightBytes+e.KVBytes {
		t.Errorf("%.2f tokens per step, memory %d", tps, e.MemoryBytes())
	}
	multi := false
	for _, r := range res.Records {
		for _, k := range r.ChunkTokens {
			multi = multi || k > 1
		}
	}
	if !multi {
		t.Error("no chunk carried several tokens")
	}
	t.Logf("acceptance %.1f %%, %.2f tokens per step", e.AcceptanceRate(), e.TokensPerStep())
}
