package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/tui/internal/golden"
	"llmbench/tui/screens/history"
	"llmbench/tui/screens/live"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
)

var (
	tab      = tea.KeyPressMsg{Code: tea.KeyTab}
	shiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	enter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	esc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	up       = tea.KeyPressMsg{Code: tea.KeyUp}
	qKey     = tea.KeyPressMsg{Code: 'q', Text: "q"}
	helpKey  = tea.KeyPressMsg{Code: '?', Text: "?"}
)

func init() { time.Local = time.UTC }

func newRoot(start Starter) Model { return newRootWith(Options{Start: start}) }

// newRootWith fills in the theme and device of o and sizes the root to 80×24.
func newRootWith(o Options) Model {
	o.Theme, o.Device = theme.New(theme.ASCII), "CPU: test · GPU: none"
	m := New(o)
	r, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return r.(Model)
}

func update(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	r, cmd := m.Update(msg)
	return r.(Model), cmd
}

func TestNavigation(t *testing.T) {
	m := newRoot(nil)
	want := []Screen{ScreenLive, ScreenResults, ScreenCompare, ScreenHistory, ScreenSetup}
	for _, w := range want {
		m, _ = update(t, m, tab)
		if m.Screen() != w {
			t.Fatalf("tab: screen %d, want %d", m.Screen(), w)
		}
	}
	m, _ = update(t, m, shiftTab)
	if m.Screen() != ScreenHistory {
		t.Errorf("shift+tab: screen %d", m.Screen())
	}
	m, _ = update(t, m, helpKey)
	if !strings.Contains(m.Render(), "Everywhere") {
		t.Error("? did not open the help")
	}
	m, _ = update(t, m, esc)
	if strings.Contains(m.Render(), "Everywhere") {
		t.Error("esc did not close the help")
	}
	if _, cmd := update(t, m, qKey); cmd == nil || cmd() != tea.Quit() {
		t.Error("q did not quit")
	}
	for _, line := range strings.Split(m.Render(), "\n") {
		if w := len([]rune(line)); w != 80 {
			t.Errorf("line of %d cells: %q", w, line)
		}
	}
}

func TestQTypesIntoPath(t *testing.T) {
	m := newRoot(nil)
	for range 20 { // to the bottom, then back up to the path field
		m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	for range 7 {
		m, _ = update(t, m, up)
	}
	m, cmd := update(t, m, qKey)
	if cmd != nil {
		t.Fatal("q quit while typing a path")
	}
	out := m.Render()
	if !strings.Contains(out, "path: q_") {
		t.Errorf("q not typed:\n%s", out)
	}
	// the footer shows the field's keys, not q quit, ? help or tab
	footer := out[strings.LastIndex(out, "\n")+1:]
	if !strings.Contains(footer, "ctrl+w") || strings.Contains(footer, "q quit") || strings.Contains(footer, "? help") {
		t.Errorf("footer on a text field: %q", footer)
	}
}

// pump runs cmd and feeds its messages to m until none is left or until stop says so.
func pump(t *testing.T, m Model, cmd tea.Cmd, stop func(Model) bool) Model {
	t.Helper()
	m, _ = pumpCmd(t, m, cmd, stop)
	return m
}

// pumpCmd is pump that also returns the command pending when stop held.
func pumpCmd(t *testing.T, m Model, cmd tea.Cmd, stop func(Model) bool) (Model, tea.Cmd) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for cmd != nil && !stop(m) {
		msgs := make(chan tea.Msg, 1)
		go func() { msgs <- cmd() }()
		select {
		case msg := <-msgs:
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					if c != nil {
						cmd = c
					}
				}
				continue
			}
			m, cmd = update(t, m, msg)
		case <-deadline:
			t.Fatal("timed out")
		}
	}
	return m, cmd
}

func TestStartRunResults(t *testing.T) {
	var got setup.Config
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		got = c
		return run.Func{Label: "fake", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			r.Progress(1, 1, "tests", "done")
			return &micro.Result{}, nil
		}}, "", nil, nil
	}
	m := newRoot(start)
	m, cmd := update(t, m, enter)
	m = pump(t, m, cmd, func(m Model) bool { return false })
	if got.Model.Path != setup.Builtin {
		t.Errorf("started %+v", got)
	}
	if m.Screen() != ScreenResults || !strings.Contains(m.Render(), "no test finished") {
		t.Errorf("screen %d:\n%s", m.Screen(), m.Render())
	}
}

// TestKernelsRun: kernels chosen on Setup, enter starts the config's kernels job;
// Live shows the suite's cases as they go and its latest section (the run waits
// until the test has seen it); Results shows the report's sections (tables and
// block-mask pictures); Setup then estimates the next run's time from this one.
func TestKernelsRun(t *testing.T) {
	var got setup.Config
	seen := make(chan struct{})
	doc := fixture.KernelsDoc("", 1, 0)
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		got = c
		return run.Func{Label: "kernels", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			step := func(done int, label string) { // as the kernels job publishes a step
				r.Output(kernelbench.Event{Done: done, Total: 2, Case: label})
				r.Progress(float64(done), 2, "cases", label)
			}
			step(0, "causal · round 1/1")
			r.Output(doc.Kernels.Sections[0])
			step(1, "causal done")
			step(1, "sliding_window · warmup")
			<-seen
			step(2, "sliding_window done")
			return &result.Stored{Doc: doc, ID: "k1"}, nil
		}}, "", nil, nil
	}
	m := newRootWith(Options{Start: start, Store: fixture.NewStore()})
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 36})
	m = keys(t, m, "down", "down", "down", "down", "right", "right", "down", "down", "down", "ctrl+u", "5", "1", "2", "down", "down", "down", "down", "down", "ctrl+u", "1")
	m, cmd := update(t, m, enter)
	m, cmd = pumpCmd(t, m, cmd, func(m Model) bool {
		s := m.Render()
		return m.Screen() == ScreenLive && strings.Contains(s, "sliding_window  warmup") && strings.Contains(s, "Latest section: Causal Mask")
	})
	live := m.Render()
	close(seen)
	if got.Kind != setup.Kernels || got.Kernel.SeqLen != 512 || got.Kernel.Reps != 1 {
		t.Errorf("started %+v", got)
	}
	for _, want := range []string{"Cases (1 done)", "causal          ✓ done", "| block-sparse", "sparsity=37.50%"} {
		if !strings.Contains(live, want) {
			t.Errorf("Live lacks %q:\n%s", want, live)
		}
	}
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 200, Height: 60}) // both sections in view
	out := m.Render()
	for _, want := range []string{"✓ finished", "Causal Mask", "Sliding Window 128", "| dense + mask", "sparsity=56.25%", "    ░░░░"} {
		if !strings.Contains(out, want) {
			t.Errorf("Results lacks %q:\n%s", want, out)
		}
	}
	m = keys(t, m, "shift+tab", "shift+tab")
	if s := m.Render(); m.Screen() != ScreenSetup || !strings.Contains(s, "at the last run's pace") {
		t.Errorf("no time estimate after a kernels run:\n%s", s)
	}
}

func TestCancelMovesToResults(t *testing.T) {
	started := make(chan struct{})
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		return run.Func{Label: "forever", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			close(started)
			<-ctx.Done()
			return &micro.Result{Partial: true}, ctx.Err()
		}}, "", nil, nil
	}
	st := fixture.NewStore()
	m := newRootWith(Options{Start: start, Store: st})
	m, cmd := update(t, m, enter)
	m, cmd = update(t, m, cmd()) // RunMsg
	if m.Screen() != ScreenLive {
		t.Fatalf("enter: screen %d", m.Screen())
	}
	m, cmd = update(t, m, cmd()) // started
	<-started
	m, _ = update(t, m, setup.RunMsg{}) // a second run is refused while one runs
	if m.Err() == "" {
		t.Error("a second run started while one was running")
	}
	m, _ = update(t, m, esc)
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	if out := m.Render(); !strings.Contains(out, "partial") {
		t.Errorf("after esc:\n%s", out)
	}
	if runs, _ := st.List(); len(runs) != 1 || !runs[0].Partial {
		t.Errorf("the stopped run was not kept as partial: %+v", runs)
	}
}

func TestStartError(t *testing.T) {
	m := newRoot(func(setup.Config) (run.Workload, string, []run.Option, error) {
		return nil, "", nil, errors.New("sonnet.txt: no such file")
	})
	m, cmd := update(t, m, enter)
	m, _ = update(t, m, cmd())
	if m.Screen() != ScreenSetup || !strings.Contains(m.Render(), "✗ sonnet.txt: no such file") {
		t.Errorf("error not shown:\n%s", m.Render())
	}
}

// TestGolden renders every screen through the root (header, body, error line,
// footer) at 80×24 and 160×48.
func TestGolden(t *testing.T) {
	for _, sz := range golden.Sizes {
		suffix := fmt.Sprintf("_%dx%d", sz[0], sz[1])
		m := newRootWith(Options{Store: fixture.NewStore(fixture.BenchDoc("bench · stories260K", 1, 0), fixture.BenchDoc("bench · stories260K · 1 thread", 1.3, 2))})
		m, _ = update(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		golden.Assert(t, "setup"+suffix, m.Render())
		m = keys(t, m, "s")
		golden.Assert(t, "setup_save"+suffix, m.Render())
		m = keys(t, m, "esc")
		m, _ = update(t, m, helpKey)
		golden.Assert(t, "help"+suffix, m.Render())
		m, _ = update(t, m, esc)
		m, _ = update(t, m, live.DoneMsg{Title: "bench · stories260K", Done: run.Done{Result: &micro.Result{}, Partial: true, Elapsed: time.Second}})
		golden.Assert(t, "results"+suffix, stripStarted(m.Render()))
		m, _ = update(t, m, tab)
		m, _ = update(t, m, tab)
		golden.Assert(t, "history"+suffix, stripWhen(m.Render()))
		m, _ = update(t, m, helpKey)
		golden.Assert(t, "history_help"+suffix, m.Render())
		m, _ = update(t, m, esc)
		m = keys(t, m, "down", "space", "down", "space", "c")
		if m.Screen() != ScreenCompare {
			t.Fatalf("c on History: screen %d, err %q", m.Screen(), m.Err())
		}
		golden.Assert(t, "compare"+suffix, m.Render())
		for _, l := range strings.Split(m.Render(), "\n") {
			if w := lipgloss.Width(l); w != sz[0] {
				t.Errorf("%v: line of %d cells: %q", sz, w, l)
			}
		}
	}
}

// TestGoldenKernels renders the kernels run through the root at every size: Setup
// with kernels chosen (attention-masks, then paged-attention), Results of an
// attention-masks run (its sections: tables and block-mask pictures) and of a
// paged-attention run (the case table by whole columns), and Compare of two kernels
// runs (c on Results).
func TestGoldenKernels(t *testing.T) {
	for _, sz := range golden.Sizes {
		suffix := fmt.Sprintf("_%dx%d", sz[0], sz[1])
		m := newRootWith(Options{Store: fixture.NewStore()})
		m, _ = update(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		m = keys(t, m, "down", "down", "down", "down", "right", "right") // workload: bench → serve-bench → kernels
		golden.Assert(t, "setup_kernels"+suffix, m.Render())
		m = keys(t, m, "down", "right") // suite: paged-attention
		golden.Assert(t, "setup_kernels_paged"+suffix, m.Render())
		doc := fixture.KernelsDoc("kernels · attention-masks · B=1 H=4 S=512 D=64 · block 128 · causal,sliding_window · r 3", 1, 0)
		m, _ = update(t, m, live.DoneMsg{Title: doc.Title, Done: run.Done{Result: &result.Stored{Doc: doc, ID: "k1"}, Elapsed: 9 * time.Second}})
		golden.Assert(t, "results_kernels"+suffix, m.Render())
		paged := fixture.PagedDoc("kernels · paged-attention · r 3", 0)
		m, _ = update(t, m, live.DoneMsg{Title: paged.Title, Done: run.Done{Result: &result.Stored{Doc: paged, ID: "k2"}, Elapsed: 90 * time.Second}})
		golden.Assert(t, "results_kernels_paged"+suffix, m.Render())
		// c compares with the previous kernels run: figure by figure of the tables
		m = newRootWith(Options{Store: fixture.NewStore(fixture.KernelsDoc("kernels · earlier", 1.2, 0))})
		m, _ = update(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		now := fixture.KernelsDoc("", 1, 5)
		m, _ = update(t, m, live.DoneMsg{Title: "kernels · now", Done: run.Done{Result: now.Kernels, Elapsed: 9 * time.Second}})
		m = keys(t, m, "c")
		if m.Screen() != ScreenCompare {
			t.Fatalf("c on a kernels run: screen %d, %q", m.Screen(), m.Err())
		}
		golden.Assert(t, "compare_kernels"+suffix, stripWhen(m.Render()))
		for _, l := range strings.Split(m.Render(), "\n") {
			if w := lipgloss.Width(l); w != sz[0] {
				t.Errorf("%v: line of %d cells: %q", sz, w, l)
			}
		}
	}
}

// stripStarted blanks the start time of a run that ended during the test.
func stripStarted(s string) string {
	return regexp.MustCompile(`started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d`).ReplaceAllString(s, "started YYYY-MM-DD hh:mm:ss")
}

// stripWhen blanks the History times (one run ended during the test).
func stripWhen(s string) string {
	return regexp.MustCompile(`\d\d-\d\d \d\d:\d\d`).ReplaceAllString(s, "MM-DD hh:mm")
}

// TestTinyTerminals: every screen renders without panicking down to 1×1.
func TestTinyTerminals(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {10, 3}, {40, 10}, {79, 23}} {
		m := newRoot(nil)
		m, _ = update(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for range tabNames {
			_ = m.Render()
			m, _ = update(t, m, tab)
		}
		m, _ = update(t, m, helpKey)
		_ = m.Render()
	}
}

// keys sends named keys ("down", "space", "enter", "esc", "tab", or one character)
// and runs the commands they return, feeding their messages back.
func keys(t *testing.T, m Model, names ...string) Model {
	t.Helper()
	for _, n := range names {
		var k tea.KeyPressMsg
		switch n {
		case "down":
			k = tea.KeyPressMsg{Code: tea.KeyDown}
		case "up":
			k = up
		case "left":
			k = tea.KeyPressMsg{Code: tea.KeyLeft}
		case "right":
			k = tea.KeyPressMsg{Code: tea.KeyRight}
		case "space":
			k = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		case "enter":
			k = enter
		case "esc":
			k = esc
		case "shift+tab":
			k = shiftTab
		case "tab":
			k = tab
		case "backspace":
			k = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "ctrl+u":
			k = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
		default:
			k = tea.KeyPressMsg{Code: []rune(n)[0], Text: n}
		}
		var cmd tea.Cmd
		m, cmd = update(t, m, k)
		for cmd != nil {
			msg := cmd()
			if msg == nil {
				break
			}
			m, cmd = update(t, m, msg)
		}
	}
	return m
}

func benchDone(slow float64) live.DoneMsg {
	d := fixture.BenchDoc("", slow, 0)
	return live.DoneMsg{Title: "bench · stories260K · pp 512 tg 128 · r 5", Done: run.Done{Result: d.Bench, Elapsed: 2 * time.Second}}
}

// TestDoneSavedOnce: every run that ends is written to the store once, partial
// runs included and marked; a failed save says so and keeps the results on screen.
func TestDoneSavedOnce(t *testing.T) {
	st := fixture.NewStore()
	m := newRootWith(Options{Store: st, Env: []result.KV{{Key: "cpu", Value: "Test CPU"}}})
	m, _ = update(t, m, benchDone(1))
	if d, err := st.Load("run-1"); err != nil || len(d.Env) != 1 || d.Env[0].Value != "Test CPU" || d.Bench == nil {
		t.Errorf("stored %+v, %v", d, err)
	}
	stopped := benchDone(1)
	stopped.Done.Partial = true
	m, _ = update(t, m, stopped)
	if st.Saves != 2 {
		t.Fatalf("%d saves for two runs", st.Saves)
	}
	runs, _ := st.List()
	if !runs[0].Partial || runs[1].Partial {
		t.Errorf("partial marks %v %v", runs[0].Partial, runs[1].Partial)
	}
	m = keys(t, m, "tab", "tab")
	if m.Screen() != ScreenHistory || !strings.Contains(m.Render(), "2 runs") || !strings.Contains(m.Render(), "partial") {
		t.Errorf("History after two runs:\n%s", m.Render())
	}
	st.Fail = errors.New("disk full")
	m, _ = update(t, m, benchDone(1))
	if m.Screen() != ScreenResults || !strings.Contains(m.Err(), "results store: disk full") {
		t.Errorf("failed save: screen %d, err %q", m.Screen(), m.Err())
	}
}

// TestCompareWithPrevious: c on Results compares the run with the newest earlier
// run of the same kind (A) — or, when there is none, opens History with the run
// selected.
func TestCompareWithPrevious(t *testing.T) {
	st := fixture.NewStore(fixture.BenchDoc("old bench", 1, 0), fixture.ServeDoc("serve", 40, 4, 1, 1))
	m := newRootWith(Options{Store: st})
	m, _ = update(t, m, benchDone(1.3))
	m = keys(t, m, "c")
	if m.Screen() != ScreenCompare {
		t.Fatalf("c: screen %d, err %q", m.Screen(), m.Err())
	}
	out := m.Render()
	for _, want := range []string{"A  old bench", "B  bench · stories260K", "significant"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	serve := fixture.ServeDoc("", 40, 8, 1, 2)
	m, _ = update(t, m, live.DoneMsg{Title: "serve again", Done: run.Done{Result: serve.Serving[0]}})
	m = keys(t, m, "c")
	if m.Screen() != ScreenCompare || !strings.Contains(m.Render(), "A  serve") {
		t.Errorf("serve c: screen %d:\n%s", m.Screen(), m.Render())
	}
	only := newRootWith(Options{Store: fixture.NewStore()})
	only, _ = update(t, only, benchDone(1))
	only = keys(t, only, "c")
	if only.Screen() != ScreenHistory || !strings.Contains(only.Render(), "no earlier bench run") || only.history.Selected()[0] != "run-1" {
		t.Errorf("no previous: screen %d:\n%s", only.Screen(), only.Render())
	}
	// a second run later: History no longer says there is no earlier run
	only, _ = update(t, only, benchDone(1.1))
	only = keys(t, only, "tab", "tab")
	if only.Screen() != ScreenHistory || strings.Contains(only.Render(), "no earlier") {
		t.Errorf("History's stale news after a second run:\n%s", only.Render())
	}
}

// TestHistoryToCompare: select two runs in History with space, c shows both.
func TestHistoryToCompare(t *testing.T) {
	st := fixture.NewStore(fixture.BenchDoc("first", 1, 0), fixture.ServeDoc("second", 40, 4, 1, 1), fixture.BenchDoc("third", 1.2, 2))
	m := newRootWith(Options{Store: st})
	m = keys(t, m, "tab", "tab", "tab", "tab")
	if m.Screen() != ScreenHistory {
		t.Fatalf("screen %d", m.Screen())
	}
	m = keys(t, m, "space", "down", "down", "space", "c")
	if m.Screen() != ScreenCompare || m.compare.Runs() != 2 {
		t.Fatalf("screen %d, %d runs, err %q", m.Screen(), m.compare.Runs(), m.Err())
	}
	if out := m.Render(); !strings.Contains(out, "A  third") || !strings.Contains(out, "B  first") {
		t.Errorf("compare:\n%s", out)
	}
	m = keys(t, m, "tab", "enter") // History: open the run under the cursor
	if m.Screen() != ScreenResults || !strings.Contains(m.Render(), "first") {
		t.Errorf("enter on History: screen %d:\n%s", m.Screen(), m.Render())
	}
}

// TestHistoryDeleteConfirm: d asks; q and tab answer "keep" rather than quit or
// switch screens; y deletes.
func TestHistoryDeleteConfirm(t *testing.T) {
	st := fixture.NewStore(fixture.BenchDoc("first", 1, 0), fixture.BenchDoc("second", 1, 1))
	m := newRootWith(Options{Store: st})
	m = keys(t, m, "tab", "tab", "tab", "tab", "d")
	m, cmd := update(t, m, qKey)
	if cmd != nil || st.Len() != 2 || m.Screen() != ScreenHistory {
		t.Fatalf("q while confirming: quit %v, %d runs", cmd != nil, st.Len())
	}
	m = keys(t, m, "d", "y")
	if st.Has("run-2") || st.Len() != 1 {
		t.Errorf("y did not delete the newest run: %d left", st.Len())
	}
}

// TestResultsKeys: e exports to the path typed (default under the current folder),
// s saves the setup as a profile, r runs the same setup again.
func TestResultsKeys(t *testing.T) {
	t.Chdir(t.TempDir())
	var saved []string
	starts := 0
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		starts++
		return run.Func{Label: "fake", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			return fixture.BenchDoc("", 1, 0).Bench, nil
		}}, "", nil, nil
	}
	m := newRootWith(Options{Store: fixture.NewStore(), Start: start, SaveProfile: func(c setup.Config, path string) error {
		saved = append(saved, c.Kind.String()+" "+path)
		return os.WriteFile(path, []byte("kind: "+c.Kind.String()+"\n"), 0o644)
	}})
	m, cmd := update(t, m, enter)
	m = pump(t, m, cmd, func(m Model) bool { return m.Screen() == ScreenResults })
	if m.Screen() != ScreenResults {
		t.Fatalf("screen %d", m.Screen())
	}
	m = keys(t, m, "e", "tab", "tab") // .md → .csv → .html or .json: cycle back to json below
	m = keys(t, m, "esc")
	if !strings.Contains(m.Render(), "cancelled") {
		t.Errorf("esc did not cancel the export:\n%s", m.Render())
	}
	m = keys(t, m, "e", "enter")
	files, _ := os.ReadDir(".")
	if len(files) != 1 || !strings.HasSuffix(files[0].Name(), ".md") || !strings.HasPrefix(files[0].Name(), "bench-stories260K-") {
		t.Fatalf("export wrote %v:\n%s", files, m.Render())
	}
	if !strings.Contains(m.Render(), "✓ exported to ./bench-stories260K-") {
		t.Errorf("no word of the export:\n%s", m.Render())
	}
	m = keys(t, m, "s")
	for range 80 {
		m = keys(t, m, "backspace")
	}
	m = keys(t, m, "p", ".", "y", "a", "m", "l", "enter")
	if len(saved) != 1 || saved[0] != "bench p.yaml" {
		t.Errorf("profile saves %v:\n%s", saved, m.Render())
	}
	m, cmd = update(t, m, tea.KeyPressMsg{Code: 'r', Text: "r"})
	m = pump(t, m, cmd, func(m Model) bool { return starts == 2 && m.Screen() == ScreenResults })
	if starts != 2 {
		t.Errorf("r started %d runs in all", starts)
	}
}

// TestSessionStore: without a results store the session's runs are kept in memory,
// so History lists them and c compares them.
func TestSessionStore(t *testing.T) {
	m := newRoot(nil)
	m, _ = update(t, m, benchDone(1))
	m, _ = update(t, m, benchDone(1.2))
	m = keys(t, m, "c")
	if m.Screen() != ScreenCompare || m.compare.Runs() != 2 {
		t.Fatalf("c: screen %d, err %q", m.Screen(), m.Err())
	}
	m = keys(t, m, "tab")
	if out := m.Render(); !strings.Contains(out, "2 runs (this session only: no results store)") {
		t.Errorf("History without a store:\n%s", out)
	}
}

// TestNoColor: with NO_COLOR (the Mono theme) no screen emits a colour, only
// attributes (bold, faint, reverse), and what colour meant is still on screen.
func TestNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	th := theme.FromEnv()
	if th.Mode != theme.Mono {
		t.Fatalf("NO_COLOR gave mode %d", th.Mode)
	}
	st := fixture.NewStore(fixture.ServeDoc("serve A", 40, 4, 1, 0), fixture.ServeDoc("serve B", 40, 4, 1.4, 1))
	m := New(Options{Theme: th, Store: st, Device: "CPU: test"})
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	colour := regexp.MustCompile(`\x1b\[[0-9;:]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`)
	for range tabNames {
		m = keys(t, m, "tab")
		if m.Screen() == ScreenHistory {
			m = keys(t, m, "space", "down", "space", "c")
		}
		if out := m.Render(); colour.MatchString(out) {
			t.Errorf("screen %d has a colour: %q", m.Screen(), colour.FindString(out))
		}
	}
	m = keys(t, m, "down", "down", "down", "down", "down", "down", "down", "down") // to the mean latencies
	if out := m.Render(); !strings.Contains(out, "▀") || !strings.Contains(out, "▒") || !strings.Contains(out, "significant") {
		t.Errorf("Compare without colour lost its glyphs or words:\n%s", out)
	}
}

// TestHelpScrolls: at 60×15 the key list is taller than the screen: the title says
// so, the footer offers ↑↓, and ↓ brings its last line (ctrl+c) into view.
func TestHelpScrolls(t *testing.T) {
	m := newRoot(nil)
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 60, Height: 15})
	m, _ = update(t, m, helpKey)
	out := m.Render()
	if strings.Contains(out, "ctrl+c") || !strings.Contains(out, "↑↓ scroll") {
		t.Fatalf("help at 60×15 before scrolling:\n%s", out)
	}
	for range 30 {
		m, _ = update(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if out := m.Render(); !strings.Contains(out, "ctrl+c") {
		t.Errorf("↓ does not scroll the help to its end:\n%s", out)
	}
	if m, _ = update(t, m, esc); m.showHelp {
		t.Error("esc does not close the help")
	}
}

// TestPaceOf: a finished run's pace, for Setup's time estimate.
func TestPaceOf(t *testing.T) {
	p, ok := paceOf(fixture.BenchDoc("b", 1, 0), time.Second)
	if !ok || p.PromptTps <= 0 || p.GenTps <= 0 {
		t.Errorf("bench pace %+v %v", p, ok)
	}
	d := fixture.ServeDoc("s", 40, 4, 1, 0)
	p, ok = paceOf(d, time.Second)
	want := 40 / d.Serving[0].Duration.Seconds()
	if !ok || math.Abs(p.RequestsPerS-want) > 1e-9 {
		t.Errorf("serve pace %+v, want %.2f req/s", p, want)
	}
	// kernels: seconds per case and round (2 cases, a warmup and 3 rounds each)
	if p, ok := paceOf(fixture.KernelsDoc("k", 1, 0), 8*time.Second); !ok || p.RoundSeconds != 1 {
		t.Errorf("kernels pace %+v %v, want 1 s per round", p, ok)
	}
	if _, ok := paceOf(result.Document{}, time.Second); ok {
		t.Error("a pace from nothing")
	}
}

// failedStore holds one run that failed before it measured anything.
type failedStore struct{}

func (failedStore) List() ([]history.Run, error) {
	return []history.Run{{ID: "r1", Summary: result.Summary{Title: "bench · README.md", Kind: "bench", Model: "README.md",
		Headline: "failed: README.md: not a GGUF file", Partial: true, Failed: true}}}, nil
}
func (failedStore) Load(string) (result.Document, error) {
	return result.Document{Title: "bench · README.md", Partial: true}, nil
}
func (failedStore) Delete(string) error                  { return nil }
func (failedStore) Save(result.Document) (string, error) { return "", nil }

// TestFailedRunSaysFailed (item 7): History lists a failed run as failed with its
// reason, and opening it says "failed" with the reason on Results (not "partial").
func TestFailedRunSaysFailed(t *testing.T) {
	m := newRootWith(Options{Store: failedStore{}})
	m, _ = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 30})
	m = keys(t, m, "tab", "tab", "tab", "tab")
	out := m.Render()
	if m.Screen() != ScreenHistory || !strings.Contains(out, "✗ failed") || !strings.Contains(out, "failed: README.md: not a GGUF file") {
		t.Fatalf("History:\n%s", out)
	}
	m, cmd := update(t, m, enter)
	if cmd == nil {
		t.Fatal("enter on History opened nothing")
	}
	m, _ = update(t, m, cmd())
	if out := m.Render(); m.Screen() != ScreenResults || !strings.Contains(out, "✗ failed: README.md: not a GGUF file") || strings.Contains(out, "stopped early") {
		t.Errorf("Results of a failed run:\n%s", out)
	}
}
