package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/golden"
	"llmbench/tui/screens/live"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/micro"
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

func newRoot(start Starter) Model {
	m := New(Options{Theme: theme.New(theme.ASCII), Start: start, Device: "CPU: test · GPU: none"})
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
	for range 5 {
		m, _ = update(t, m, up)
	}
	m, cmd := update(t, m, qKey)
	if cmd != nil {
		t.Fatal("q quit while typing a path")
	}
	if !strings.Contains(m.Render(), "path: q_") {
		t.Errorf("q not typed:\n%s", m.Render())
	}
}

// pump runs cmd and feeds its messages to m until none is left or until stop says so.
func pump(t *testing.T, m Model, cmd tea.Cmd, stop func(Model) bool) Model {
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
	return m
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

func TestCancelMovesToResults(t *testing.T) {
	started := make(chan struct{})
	start := func(c setup.Config) (run.Workload, string, []run.Option, error) {
		return run.Func{Label: "forever", F: func(ctx context.Context, r *run.Reporter) (any, error) {
			close(started)
			<-ctx.Done()
			return &micro.Result{Partial: true}, ctx.Err()
		}}, "", nil, nil
	}
	m := newRoot(start)
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

func TestGolden(t *testing.T) {
	m := newRoot(nil)
	golden.Assert(t, "setup_80x24", m.Render())
	m, _ = update(t, m, helpKey)
	golden.Assert(t, "help_80x24", m.Render())
	m, _ = update(t, m, esc)
	m, _ = update(t, m, live.DoneMsg{Title: "bench · stories260K", Done: run.Done{Result: &micro.Result{}, Partial: true, Elapsed: time.Second}})
	golden.Assert(t, "results_80x24", m.Render())
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
