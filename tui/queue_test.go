package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/run"
)

// fakeQueue is a queue of bench workloads that log when they are built, start and
// end; hold[i] makes run i wait until it is cancelled (esc).
type fakeQueue struct {
	mu  sync.Mutex
	log []string
}

func (f *fakeQueue) add(s string) {
	f.mu.Lock()
	f.log = append(f.log, s)
	f.mu.Unlock()
}

func (f *fakeQueue) events() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, " ")
}

func (f *fakeQueue) runs(hold ...bool) []QueuedRun {
	var q []QueuedRun
	for i, h := range hold {
		name := string(rune('A' + i))
		q = append(q, QueuedRun{Title: "run " + name, Start: func() (run.Workload, string, []run.Option, error) {
			f.add("build" + name)
			return run.Func{Label: "bench", F: func(ctx context.Context, r *run.Reporter) (any, error) {
				f.add("start" + name)
				defer f.add("end" + name)
				res := &micro.Result{Spec: workloads.BenchSpec{Reps: 1}, Records: []micro.Record{{ModelFilename: name, NPrompt: 8, SamplesNs: []uint64{1e6}}}}
				if h {
					<-ctx.Done()
					res.Partial = true
					return res, ctx.Err()
				}
				return res, nil
			}}, "fake device", nil, nil
		}})
	}
	return q
}

// TestQueue: queued runs start at launch one after another, each only after the one
// before it ended and was saved, and the last ends on Results.
func TestQueue(t *testing.T) {
	f := &fakeQueue{}
	st := fixture.NewStore()
	m := newRootWith(Options{Store: st, Queue: f.runs(false, false, false)})
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("a queue does not start at launch")
	}
	m = pump(t, m, cmd, func(m Model) bool {
		left, _ := m.Queued()
		return left == 0 && m.Screen() == ScreenResults
	})
	if got := f.events(); got != "buildA startA endA buildB startB endB buildC startC endC" {
		t.Errorf("order: %s", got)
	}
	runs, _ := st.List()
	if len(runs) != 3 {
		t.Fatalf("%d runs saved, want 3", len(runs))
	}
	for _, r := range runs {
		if r.Partial || !strings.HasPrefix(r.Title, "run ") {
			t.Errorf("saved %+v (the title without [i/n], not partial)", r)
		}
	}
	if out := m.Render(); !strings.Contains(out, "✓ finished") || !strings.Contains(out, "run C") {
		t.Errorf("the last run does not end on Results:\n%s", out)
	}
}

// TestQueueStopped: esc on a queued run keeps it partial and holds the queue (the
// next run does not start by itself); n on Results starts it, and the runs after
// it follow on their own again.
func TestQueueStopped(t *testing.T) {
	f := &fakeQueue{}
	st := fixture.NewStore()
	m := newRootWith(Options{Store: st, Queue: f.runs(true, false, false)})
	m, cmd := update(t, m, m.Init()())
	if m.Screen() != ScreenLive || !strings.Contains(m.Render(), "[1/3] run A") {
		t.Fatalf("the first run is not Live:\n%s", m.Render())
	}
	m, cmd = update(t, m, cmd()) // started
	for end := time.Now().Add(10 * time.Second); !strings.Contains(f.events(), "startA"); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the first run did not start")
		}
	}
	m, _ = update(t, m, esc)
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	if left, held := m.Queued(); left != 2 || !held {
		t.Fatalf("after esc: %d left, held %v", left, held)
	}
	out := m.Render()
	lines := strings.Split(out, "\n")
	if !strings.Contains(out, "partial") || !strings.Contains(out, "queue held: n starts the next run (2 of 3 left)") ||
		!strings.Contains(lines[len(lines)-1], "n next queued run") {
		t.Errorf("after esc:\n%s", out)
	}
	if strings.Contains(f.events(), "buildB") {
		t.Errorf("the next run started after esc: %s", f.events())
	}
	if runs, _ := st.List(); len(runs) != 1 || !runs[0].Partial {
		t.Errorf("the stopped run was not kept as partial: %+v", runs)
	}
	m, cmd = update(t, m, keyOf("n"))
	m = pump(t, m, cmd, func(m Model) bool {
		left, _ := m.Queued()
		return left == 0 && m.Screen() == ScreenResults && strings.Contains(f.events(), "endC")
	})
	if got := f.events(); got != "buildA startA endA buildB startB endB buildC startC endC" {
		t.Errorf("order: %s", got)
	}
	if _, held := m.Queued(); held {
		t.Error("still held after the queue ran out")
	}
	if runs, _ := st.List(); len(runs) != 3 {
		t.Errorf("%d runs saved, want 3", len(runs))
	}
}

// keyOf is the key press of a printable key.
func keyOf(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }

// TestQueueBuildError: a queued run whose workload cannot be built says why on the
// error line and holds the queue; n starts the next.
func TestQueueBuildError(t *testing.T) {
	f := &fakeQueue{}
	q := f.runs(false, false)
	q[0].Start = func() (run.Workload, string, []run.Option, error) {
		return nil, "", nil, errors.New("dataset: no such file")
	}
	m := newRootWith(Options{Queue: q})
	m, _ = update(t, m, m.Init()())
	if left, held := m.Queued(); left != 1 || !held || !strings.Contains(m.Render(), "✗ run A: dataset: no such file · n runs the next (1 of 2 left)") {
		t.Fatalf("left %d held %v:\n%s", left, held, m.Render())
	}
	m, cmd := update(t, m, keyOf("n"))
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	if got := f.events(); got != "buildB startB endB" || m.Err() != "" {
		t.Errorf("after n: %s, error %q", got, m.Err())
	}
}

// TestQueuedKernels: a queued kernels run (llmbench run builtin:attention-masks on a
// terminal) is shown with the kernels views on Live (its cases and latest section).
func TestQueuedKernels(t *testing.T) {
	seen := make(chan struct{})
	q := []QueuedRun{{Title: "attention-masks", Kernels: true, Start: func() (run.Workload, string, []run.Option, error) {
		return run.Func{Label: "kernels", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			r.Output(kernelbench.Event{Total: 1, Unit: "rounds", Case: "causal · warmup"})
			<-seen
			return fixture.KernelsDoc("attention-masks", 1, 0).Kernels, nil
		}}, "", nil, nil
	}}}
	m := newRootWith(Options{Queue: q, Store: fixture.NewStore()})
	m, cmd := pumpCmd(t, m, m.Init(), func(m Model) bool { return strings.Contains(m.Render(), "causal  warmup") })
	if s := m.Render(); !strings.Contains(s, "Cases (0 done)") || !strings.Contains(s, "Latest section") {
		t.Errorf("queued kernels run on Live:\n%s", s)
	}
	close(seen)
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	if s := m.Render(); !strings.Contains(s, "Causal Mask") {
		t.Errorf("Results:\n%s", s)
	}
}
