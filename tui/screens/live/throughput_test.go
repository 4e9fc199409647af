package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/metrics"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
)

// throughputEvents is a two-row throughput run as the job publishes it: the first
// row's point (8 requests, 64 tokens each, 4 s: 128 tok/s), its result (120.0 tok/s
// over its duration), then the second row half way (4 of 8 requests, 256 tokens
// in 1 s since it started).
func throughputEvents() []run.Event {
	l := metrics.NewLive(8)
	ev := []run.Event{run.Output{At: time.Second, Data: jobs.PointStarted{Spec: workloads.ServeSpec{}}}}
	for i := range 8 {
		l.Add(&metrics.Record{Start: time.Duration(i) * 100 * time.Millisecond, Success: true, TTFT: 30 * time.Millisecond,
			Latency: time.Second, OutputTokens: 64, ITL: []time.Duration{15 * time.Millisecond}})
		if i == 7 {
			ev = append(ev, run.Progress{At: 5 * time.Second, Done: 8, Total: 8, Unit: "requests", Label: "serve-bench"},
				run.Snapshot{At: 5 * time.Second, Data: l.Snapshot()})
		}
	}
	res := &serving.Result{Requests: 8, Summary: metrics.Serving{Completed: 8, OutputThroughput: 120}}
	ev = append(ev, run.Output{At: 5 * time.Second, Data: jobs.PointDone{Result: res}},
		run.Log{At: 5 * time.Second, Text: "rolling window: cache 512 < input 256 + output 512, each sequence keeps its last 512 positions"},
		run.Output{At: 6 * time.Second, Data: jobs.PointStarted{Spec: workloads.ServeSpec{}}})
	l2 := metrics.NewLive(8)
	for i := range 4 {
		l2.Add(&metrics.Record{Start: 6*time.Second + time.Duration(i)*100*time.Millisecond, Success: true, TTFT: 20 * time.Millisecond,
			Latency: 500 * time.Millisecond, OutputTokens: 64, ITL: []time.Duration{10 * time.Millisecond}})
	}
	return append(ev, run.Progress{At: 7 * time.Second, Done: 4, Total: 8, Unit: "requests", Label: "serve-bench"},
		run.Snapshot{At: 7 * time.Second, Data: l2.Snapshot()})
}

// scriptedRows starts a throughput Live screen with its row names and feeds events.
func scriptedRows(t *testing.T, names []string, events ...run.Event) Model {
	t.Helper()
	m, _ := New(theme.New(theme.ASCII)).Start("throughput · llama-small BF16,Q8_0 · batch 16", ThroughputRun, run.Func{}, "")
	m.SetRowNames(names)
	ch := make(chan run.Event, len(events))
	m, _ = m.Update(startedMsg{events: ch})
	for _, e := range events {
		m, _ = m.Update(batchMsg{ch: ch, events: []run.Event{e}})
	}
	return m
}

// TestThroughputRows: each row's requests and output tok/s (the point's own figure
// once it ended, tokens since it started while it runs), the progress line names the
// row, rows not started wait, and the run's end marks the row running stopped; the
// serving views (output tok/s, the latency histograms) stay.
func TestThroughputRows(t *testing.T) {
	m := scriptedRows(t, []string{"bfloat16", "int8", "q4_0 / f16"}, throughputEvents()...)
	want := [][]string{{"bfloat16", "8/8", "120.0", "✓ done"}, {"int8", "4/8", "256.0", "running"}, {"q4_0 / f16", "-", "-", "waiting"}}
	if got := m.rowsT.Rows(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if m.prog.Label != "row 2/3 int8" {
		t.Errorf("progress label %q", m.prog.Label)
	}
	m.SetSize(120, 33)
	v := m.View()
	for _, s := range []string{"Rows", "Output tok/s", "TTFT histogram", "int8", "256.0", "row 2/3 int8"} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
	if f := m.Footer(); len(f) != 3 || f[1].Help().Key != "t/p/i" {
		t.Errorf("footer %v: the histogram keys are a serving run's", f)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'i', Text: "i"})
	if !strings.Contains(m.View(), "[ITL]") {
		t.Errorf("i does not switch the histogram")
	}
	m.finish(run.Done{Partial: true, Elapsed: 8 * time.Second})
	if got := m.rowsT.Rows()[1][3]; got != "stopped" {
		t.Errorf("the row running when the run stopped: %q", got)
	}
	// a point past the names is named by its number
	extra := append(throughputEvents(), run.Output{At: 9 * time.Second, Data: jobs.PointStarted{}})
	if r := scriptedRows(t, []string{"a"}, extra...).rowsT.Rows(); len(r) != 3 || r[1][0] != "row 2" || r[2][0] != "row 3" {
		t.Errorf("unnamed rows %q", r)
	}
}

// TestThroughputGolden: a throughput run half way at every size.
func TestThroughputGolden(t *testing.T) {
	for _, sz := range golden.Sizes {
		m := scriptedRows(t, []string{"bfloat16", "int8"}, throughputEvents()...)
		m.SetSize(sz[0], sz[1]-3)
		golden.Assert(t, fmt.Sprintf("throughput_%dx%d", sz[0], sz[1]), m.View())
	}
}
