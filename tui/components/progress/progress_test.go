package progress

import (
	"strings"
	"testing"
	"time"

	"llmbench/tui/theme"
)

func TestETA(t *testing.T) {
	m := New(theme.New(theme.ASCII))
	if _, ok := m.ETA(); ok {
		t.Error("ETA before progress")
	}
	m.Done, m.Total, m.Elapsed = 1, 4, 10*time.Second
	if d, ok := m.ETA(); !ok || d != 30*time.Second {
		t.Errorf("ETA %v %v, want 30s", d, ok)
	}
	m.Unit, m.Failed = "requests", 2
	v := m.View()
	for _, want := range []string{"25 %", "1/4 requests", "00:10 elapsed", "ETA 00:30", "✗ 2 failed"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if Clock(3725*time.Second) != "1:02:05" {
		t.Error(Clock(3725 * time.Second))
	}
}

// TestBytes: a synthetic model being written shows its own label (bytes of total,
// ETA of the write), not the raw byte counts and the run's ETA.
func TestBytes(t *testing.T) {
	m := New(theme.New(theme.ASCII))
	m.SetSize(100, 2)
	m.Done, m.Total, m.Unit, m.Elapsed = 312<<20, 739<<20, "bytes", 5*time.Second
	m.Label = "writing synth:llama-1b:Q4_0 · 312.00 MiB of 739.00 MiB · ETA 7 s"
	v := m.View()
	if !strings.Contains(v, "42 %") || !strings.Contains(v, "312.00 MiB of 739.00 MiB · ETA 7 s") || strings.Contains(v, "327155712") {
		t.Errorf("bytes progress:\n%s", v)
	}
}
