package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui"
	"llmbench/tui/screens/live"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/result"
	runcore "llmbench/workloads/run"
	"llmbench/workloads/store"
)

// TestTUIDraftRuns: a Setup serve-bench with a draft, started the way the workbench
// starts it (tuiStarter: the job layer), speculates (the draft's tokens are counted
// in the stored run); one whose draft does not share the model's vocabulary (the
// built-in model, 512 pieces, and the synthetic spec-tiny-draft, 2048) is refused
// when the engine loads, and that one line is the run's error, which the workbench
// shows on its error line.
func TestTUIDraftRuns(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the synthetic models are written here
	dev, st := workbenchParts(t)
	run := func(c setup.Config) runcore.Done { t.Helper(); return runSetup(t, dev, st, c) }
	c := setup.Config{Kind: setup.Serve, Model: workloads.BenchModel{Shape: "spec-tiny", Type: "Q8_0"}, Dataset: "random", Prompts: 2,
		InputLen: 16, OutputLen: 16, Concurrency: []int{1}, Rate: []float64{math.Inf(1)}, Threads: 1,
		Draft: workloads.BenchModel{Shape: "spec-tiny-draft", Type: "Q8_0"}, DraftMax: 4, DraftMin: 1, DraftPMin: 0.6}
	done := run(c)
	if done.Err != nil {
		t.Fatalf("the pair: %v", done.Err)
	}
	if s, ok := done.Result.(*result.Stored); !ok || len(s.Doc.Serving) != 1 || s.Doc.Serving[0].Engine == nil {
		t.Errorf("the pair's result: %+v", done.Result)
	} else if e := s.Doc.Serving[0].Engine; e.DraftedTokens == 0 || e.DraftWeightBytes == 0 {
		t.Errorf("the run did not speculate: %+v", e)
	}

	c.Model = workloads.BenchModel{Path: setup.Builtin}
	done = run(c)
	const want = "does not share the model's vocabulary: tokens: 512 in the model, 2048 in the draft"
	if done.Err == nil || !strings.Contains(done.Err.Error(), want) || strings.Contains(done.Err.Error(), "\n") {
		t.Fatalf("the mismatched draft: %v, want one line with %q", done.Err, want)
	}
	m := tea.Model(tui.New(tui.Options{Theme: theme.New(theme.ASCII), Device: "CPU: test"}))
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	m, _ = m.Update(live.DoneMsg{Title: c.Describe(), Done: done})
	root := m.(tui.Model)
	if got := root.Err(); got != "run failed: "+done.Err.Error() || !strings.Contains(root.Render(), want) {
		t.Errorf("the workbench's error line %q:\n%s", got, root.Render())
	}
}

// runSetup runs c the way the workbench starts a Setup run (tuiStarter: the job
// layer, measured with dev, kept in st) and returns how it ended.
func runSetup(t *testing.T, dev *jobs.Device, st *store.Store, c setup.Config) runcore.Done {
	t.Helper()
	w, _, opts, err := tuiStarter(dev, st)(c)
	if err != nil {
		t.Fatalf("the starter refused %s: %v", c.Describe(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, events := runcore.Start(ctx, w, opts...)
	var done runcore.Done
	for ev := range events {
		if d, ok := ev.(runcore.Done); ok {
			done = d
		}
	}
	return done
}

// workbenchParts opens what a workbench run needs in a test: no telemetry device
// (closed at the test's end) and a results store in a temporary folder.
func workbenchParts(t *testing.T) (*jobs.Device, *store.Store) {
	t.Helper()
	st, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dev, err := jobs.OpenDevice("none", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Close)
	return dev, st
}
