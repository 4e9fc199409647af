package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/metrics"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
)

// TestThroughputRun: throughput chosen on Setup (← from bench), a synthetic shape
// picked, its weights BF16, a dataset typed,
// enter starts the config's throughput job; Live follows its rows (the first done
// with its tok/s, the second running; the run waits until the test has seen it);
// Results shows JetStream's table and the rolling-window line.
func TestThroughputRun(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "sg.json")
	if err := os.WriteFile(ds, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got setup.Config
	seen := make(chan struct{})
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		got = c
		return run.Func{Label: "throughput", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			r.Output(jobs.PointStarted{Spec: workloads.ServeSpec{}})
			r.Progress(4, 4, "requests", "serve-bench")
			r.Output(jobs.PointDone{Result: &serving.Result{Requests: 4, Summary: metrics.Serving{Completed: 4, OutputThroughput: 33.5}}})
			r.Output(jobs.PointStarted{Spec: workloads.ServeSpec{}})
			r.Progress(1, 4, "requests", "serve-bench")
			<-seen
			return &result.Stored{Doc: fixture.ThroughputDoc(c.Describe(), 40, 0), ID: "t1"}, nil
		}}, "", nil, nil
	}
	m := newRootWith(Options{Start: start, Store: fixture.NewStore()})
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 36})
	m = keys(t, m, "down", "down", "down", "down", "left", "up", "up", "space") // workload ◂ throughput; synthetic llama-1b
	m = keys(t, m, "down", "down", "down", "ctrl+u", "B", "F", "1", "6")        // weight types BF16
	m = keys(t, m, "down", "down", "down", "down", "down", "down", "down")      // dataset path
	m = typeText(t, m, ds)
	m, cmd := update(t, m, enter)
	m, cmd = pumpCmd(t, m, cmd, func(m Model) bool {
		s := m.Render()
		return m.Screen() == ScreenLive && strings.Contains(s, "row 2/2") && strings.Contains(s, "33.5")
	})
	live := m.Render()
	close(seen)
	if got.Kind != setup.Throughput || got.DatasetPath != ds || len(got.WeightsTypes) != 1 || got.WeightsTypes[0] != "BF16" || got.Model.Shape != "llama-1b" {
		t.Errorf("started %+v", got)
	}
	for _, want := range []string{"Rows", "✓ done", "running", "row 2/2"} {
		if !strings.Contains(live, want) {
			t.Errorf("Live lacks %q:\n%s", want, live)
		}
	}
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	out := m.Render()
	for _, want := range []string{"✓ finished", "throughput (token/s)", "| bfloat16 |", "rolling window: cache 512 < input 256 + output 512"} {
		if !strings.Contains(out, want) {
			t.Errorf("Results lacks %q:\n%s", want, out)
		}
	}
}

// typeText types s into the focused field, a key per character.
func typeText(t *testing.T, m Model, s string) Model {
	t.Helper()
	var ks []string
	for _, r := range s {
		ks = append(ks, string(r))
	}
	return keys(t, m, append([]string{"ctrl+u"}, ks...)...)
}
