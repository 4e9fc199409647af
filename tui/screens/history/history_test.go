package history_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/tui/internal/golden"
	"llmbench/tui/screens/history"
	"llmbench/tui/theme"
)

func init() { time.Local = time.UTC }

func key(s string) tea.KeyPressMsg {
	switch s {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func store() *fixture.Store {
	s := fixture.NewStore(
		fixture.BenchDoc("bench · stories260K · pp 512 tg 128 · r 5", 1, 0),
		fixture.ServeDoc("serve-bench · stories260K · c=4 · rate inf", 100, 4, 1, 10),
		fixture.BenchDoc("bench · stories260K · pp 512 tg 128 · r 5", 1.1, 20),
	)
	d := fixture.ServeDoc("serve-bench · stories260K · c=8 · rate inf", 40, 8, 1.2, 30)
	d.Partial = true
	s.Save(d)
	s.Saves = 0
	return s
}

func press(t *testing.T, m history.Model, keys ...string) (history.Model, tea.Msg) {
	t.Helper()
	var msg tea.Msg
	for _, k := range keys {
		var cmd tea.Cmd
		m, cmd = m.Update(key(k))
		if cmd != nil {
			msg = cmd()
		}
	}
	return m, msg
}

func TestGolden(t *testing.T) {
	m := history.New(theme.New(theme.ASCII), store())
	m, _ = press(t, m, "down", "space", "down", "down", "space")
	for _, sz := range golden.Sizes {
		m.SetSize(sz[0], sz[1]-3)
		v := m.View()
		golden.Assert(t, fmt.Sprintf("history_%dx%d", sz[0], sz[1]), v)
		if n := len(strings.Split(v, "\n")); n != sz[1]-3 {
			t.Errorf("%v: %d lines", sz, n)
		}
		// the headline column stays in view at every size (it was cut at 80×24)
		if !strings.Contains(v, "pp512 2327.7 t/s · tg128 1818.5 t/s") || !strings.Contains(v, "11-21 12:20") {
			t.Errorf("%v: the headline or the time is not in view:\n%s", sz, v)
		}
	}
	m.SetSize(80, 21)
	m, _ = press(t, m, "/", "s", "e", "r", "v")
	golden.Assert(t, "filter_80x24", m.View())
	m, _ = press(t, m, "enter", "d")
	golden.Assert(t, "confirm_80x24", m.View())
	e := history.New(theme.New(theme.ASCII), fixture.NewStore())
	e.SetSize(80, 21)
	golden.Assert(t, "empty_80x24", e.View())
}

// TestCompareSelected: two runs selected with space, c sends both, in the order
// they were picked.
func TestCompareSelected(t *testing.T) {
	m := history.New(theme.New(theme.ASCII), store())
	m, msg := press(t, m, "c")
	if msg != nil || !strings.Contains(m.View(), "select two or more") {
		t.Fatalf("c with nothing selected: %v\n%s", msg, m.View())
	}
	m, msg = press(t, m, "down", "down", "space", "down", "space", "c")
	cm, ok := msg.(history.CompareMsg)
	if !ok {
		t.Fatalf("c sent %T", msg)
	}
	if len(cm.Docs) != 2 || !strings.Contains(cm.Docs[0].Title, "c=4") || cm.Docs[1].Bench == nil {
		t.Errorf("compare got %d docs: %q", len(cm.Docs), []string{cm.Docs[0].Title, cm.Docs[1].Title})
	}
	if got := m.Selected(); len(got) != 2 || got[0] != "run-2" || got[1] != "run-1" {
		t.Errorf("selected %v", got)
	}
	m, _ = press(t, m, "space") // unselect the one under the cursor
	if got := m.Selected(); len(got) != 1 {
		t.Errorf("space did not unselect: %v", got)
	}
}

func TestDeleteConfirms(t *testing.T) {
	s := store()
	m := history.New(theme.New(theme.ASCII), s)
	m, _ = press(t, m, "d")
	if !m.Capturing() || !strings.Contains(m.View(), "delete run run-4?") {
		t.Fatalf("d did not ask:\n%s", m.View())
	}
	m, _ = press(t, m, "n")
	if s.Len() != 4 || len(m.Runs()) != 4 {
		t.Fatalf("n deleted: %d left", s.Len())
	}
	m, _ = press(t, m, "d", "y")
	if s.Has("run-4") || len(m.Runs()) != 3 {
		t.Fatalf("y did not delete: %d listed", len(m.Runs()))
	}
	if !strings.Contains(m.View(), "deleted run-4") {
		t.Errorf("no word of the deletion:\n%s", m.View())
	}
	s.Fail = errors.New("disk full")
	m, _ = press(t, m, "d", "y")
	if !strings.Contains(m.View(), "✗ delete run-3: disk full") {
		t.Errorf("failed delete not shown:\n%s", m.View())
	}
}

func TestFilterAndOpen(t *testing.T) {
	m := history.New(theme.New(theme.ASCII), store())
	m, _ = press(t, m, "/", "q", "?")
	if !m.Capturing() || len(m.Runs()) != 0 {
		t.Fatalf("filter q?: capturing %v, %d runs", m.Capturing(), len(m.Runs()))
	}
	m, _ = press(t, m, "backspace", "backspace", "S", "E", "R", "V", "E", "enter")
	if m.Capturing() || len(m.Runs()) != 2 {
		t.Fatalf("filter SERVE: %d runs", len(m.Runs()))
	}
	m, msg := press(t, m, "down", "enter")
	om, ok := msg.(history.OpenMsg)
	if !ok || om.ID != "run-2" || len(om.Doc.Serving) != 1 {
		t.Fatalf("enter sent %T %+v", msg, om.ID)
	}
	m, _ = press(t, m, "esc")
	if len(m.Runs()) != 4 {
		t.Errorf("esc left the filter: %d runs", len(m.Runs()))
	}
}

func TestNoStore(t *testing.T) {
	m := history.New(theme.New(theme.ASCII), nil)
	m, msg := press(t, m, "enter", "space", "c", "d")
	if msg != nil {
		t.Errorf("sent %T without a store", msg)
	}
	if !strings.Contains(strings.ToLower(m.View()), "no results store") {
		t.Errorf("no word of the missing store:\n%s", m.View())
	}
}

// TestTinySizes: the screen draws exactly the lines it is given, down to 1×1.
func TestTinySizes(t *testing.T) {
	m := history.New(theme.New(theme.ASCII), store())
	for _, sz := range [][2]int{{1, 1}, {12, 4}, {30, 8}, {79, 21}} {
		m.SetSize(sz[0], sz[1])
		if n := len(strings.Split(m.View(), "\n")); n != sz[1] {
			t.Errorf("%v: %d lines", sz, n)
		}
	}
}
