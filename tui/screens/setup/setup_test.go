package setup

import (
	"fmt"
	"math"
	"testing"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
)

func press(m Model, keys ...tea.KeyPressMsg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		m, cmd = m.Update(k)
	}
	return m, cmd
}

var (
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	left  = tea.KeyPressMsg{Code: tea.KeyLeft}
	right = tea.KeyPressMsg{Code: tea.KeyRight}
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
	space = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	bksp  = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

func text(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

func newModel() Model { return New(theme.New(theme.ASCII), []string{"testdata/tiny.gguf"}) }

func runConfig(t *testing.T, m Model) Config {
	t.Helper()
	m, cmd := m.Update(enter)
	if cmd == nil {
		t.Fatalf("enter did not run: %s", m.errorMsg)
	}
	msg, ok := cmd().(RunMsg)
	if !ok {
		t.Fatalf("enter gave %T", cmd())
	}
	return msg.Config
}

func TestDefaultIsBuiltinBench(t *testing.T) {
	c := runConfig(t, newModel())
	if c.Kind != Bench || c.Model.Path != Builtin || c.Prompt != 512 || c.Gen != 128 || c.Reps != 5 {
		t.Errorf("default config %+v", c)
	}
}

func TestPickSynthetic(t *testing.T) {
	m, _ := press(newModel(), down, right, down, right, space)
	c := runConfig(t, m)
	if c.Model.Shape == "" || c.Model.Type == "" || c.Model.Path != "" {
		t.Fatalf("model %+v", c.Model)
	}
	// Moving through the rows does not change the pick.
	m, _ = press(newModel(), down, down, down, down)
	if c := runConfig(t, m); c.Model.Path != Builtin {
		t.Errorf("moving picked %+v", c.Model)
	}
}

func TestEditNumbers(t *testing.T) {
	m := newModel()
	m.focus = len(m.modelRows()) + 1 // pp
	m, _ = press(m, bksp, bksp, bksp)
	m, _ = press(m, text("64x")...) // the letter is ignored
	m, _ = press(m, down, right)    // tg doubles
	c := runConfig(t, m)
	if c.Prompt != 64 || c.Gen != 256 {
		t.Errorf("pp %d tg %d, want 64 256", c.Prompt, c.Gen)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []tea.KeyPressMsg
		want string
	}{
		{"reps zero", append([]tea.KeyPressMsg{bksp}, text("0")...), "reps: a whole number ≥ 1"},
		{"empty", []tea.KeyPressMsg{bksp}, "reps: a whole number ≥ 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel()
			m.focus = len(m.modelRows()) + 3 // reps
			m, _ = press(m, tc.keys...)
			m, cmd := m.Update(enter)
			if cmd != nil || m.errorMsg != tc.want {
				t.Errorf("error %q (cmd %v), want %q", m.errorMsg, cmd != nil, tc.want)
			}
		})
	}
	// Both pp and tg 0.
	m := newModel()
	m.focus = len(m.modelRows()) + 1
	m, _ = press(m, bksp, bksp, bksp)
	m, _ = press(m, text("0")...)
	m, _ = press(m, down, bksp, bksp, bksp)
	m, _ = press(m, text("0")...)
	if _, err := m.Config(); err == nil {
		t.Error("pp 0 tg 0 accepted")
	}
	// A path that does not exist.
	m = newModel()
	m.focus = len(m.modelRows()) - 1
	m, _ = press(m, text("nope.gguf")...)
	if !m.Capturing() {
		t.Error("the path field does not capture text")
	}
	if _, err := m.Config(); err == nil || err.Error() != "path: no such file" {
		t.Errorf("missing path: %v", err)
	}
}

func TestServeConfig(t *testing.T) {
	m := newModel()
	m.focus = len(m.modelRows()) // workload kind
	m, _ = press(m, right, down, right, down, down, down, bksp, bksp, bksp)
	m, _ = press(m, text("2.5")...)
	m, _ = press(m, down, right)
	for range len("http://127.0.0.1:8000") {
		m, _ = press(m, bksp)
	}
	m, _ = press(m, text("http://h:1")...)
	c := runConfig(t, m)
	if c.Kind != Serve || c.Dataset != "sonnet" || c.Rate != 2.5 || c.URL != "http://h:1" || c.Concurrency != 8 {
		t.Errorf("serve config %+v", c)
	}
	m, _ = press(m, up, bksp, bksp, bksp)
	m, _ = press(m, text("inf")...)
	if c := runConfig(t, m); !math.IsInf(c.Rate, 1) {
		t.Errorf("rate %v", c.Rate)
	}
	_ = up
	_ = left
}

func TestGolden(t *testing.T) {
	serve := newModel()
	serve.focus = len(serve.modelRows())
	serve, _ = press(serve, right)
	for _, tc := range []struct {
		name string
		m    Model
	}{{"bench", newModel()}, {"serve", serve}} {
		for _, sz := range [][2]int{{80, 24}, {160, 48}} {
			m := tc.m
			m.SetSize(sz[0], sz[1]-3) // the root takes header, error line and footer
			golden.Assert(t, fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1]), m.View())
		}
	}
}
