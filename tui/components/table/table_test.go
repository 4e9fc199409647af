package table

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/theme"
)

func TestScrollAndAlign(t *testing.T) {
	m := New(theme.New(theme.ASCII), "test", "t/s")
	m.SetSize(20, 3)
	m.SetRows([][]string{{"pp512", "2394.56"}, {"tg128", "31.2"}, {"pg", "7"}})
	v := strings.Split(m.View(), "\n")
	if len(v) != 3 || !strings.HasPrefix(v[2], "tg128     31.20") && !strings.Contains(v[2], "   31.2") {
		t.Errorf("view:\n%s", m.View())
	}
	for range 5 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if m.CursorRow() != 2 || !strings.Contains(m.View(), "pg") || strings.Contains(m.View(), "pp512") {
		t.Errorf("cursor %d view:\n%s", m.CursorRow(), m.View())
	}
}
