package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/fixture"
	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
)

func init() { time.Local = time.UTC }

func newCompare(t *testing.T, docs ...result.Document) Model {
	t.Helper()
	m := New(theme.New(theme.ASCII))
	if err := m.Set(docs); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGolden(t *testing.T) {
	cases := map[string][]result.Document{
		"bench": {fixture.BenchDoc("bench · stories260K", 1, 0), fixture.BenchDoc("bench · stories260K · 2 threads", 1.25, 5)},
		"serve": {fixture.ServeDoc("serve-bench · c=4", 100, 4, 1, 0), fixture.ServeDoc("serve-bench · c=8", 100, 8, 1.5, 3)},
		"three": {fixture.BenchDoc("A", 1, 0), fixture.BenchDoc("B", 1.005, 1), fixture.BenchDoc("C", 0.8, 2)},
		"mixed": {fixture.BenchDoc("bench", 1, 0), fixture.ServeDoc("serve", 50, 4, 1, 1)},
	}
	for name, docs := range cases {
		m := newCompare(t, docs...)
		for _, sz := range golden.Sizes {
			m.SetSize(sz[0], sz[1]-3)
			v := m.View()
			golden.Assert(t, fmt.Sprintf("%s_%dx%d", name, sz[0], sz[1]), v)
			lines := strings.Split(v, "\n")
			if len(lines) != sz[1]-3 {
				t.Errorf("%s %v: %d lines", name, sz, len(lines))
			}
		}
	}
	golden.Assert(t, "empty_80x24", func() string { m := New(theme.New(theme.ASCII)); m.SetSize(80, 21); return m.View() }())
}

// TestVerdicts: a 25 % slowdown over five repetitions is significant, half a percent
// is noise, and a metric without raw samples has no verdict.
func TestVerdicts(t *testing.T) {
	m := newCompare(t, fixture.BenchDoc("A", 1, 0), fixture.BenchDoc("B", 1.25, 1), fixture.BenchDoc("C", 1.005, 2))
	c := m.Comparison()
	if len(c.Rows) != 2 || c.Rows[0].Label() != "pp512 t/s" {
		t.Fatalf("rows %+v", c.Rows)
	}
	r := c.Rows[0]
	if r.Verdict[1] != report.VerdictSignificant || r.Verdict[2] != report.VerdictNoise {
		t.Errorf("verdicts %q", r.Verdict)
	}
	if d := r.DiffPct[1]; d > -19 || d < -21 { // t/s of 1.25× the time: −20 %
		t.Errorf("diff %.2f %%, want −20 %%", d)
	}
	s := newCompare(t, fixture.ServeDoc("A", 50, 4, 1, 0), fixture.ServeDoc("B", 50, 4, 2, 1)).Comparison()
	for _, r := range s.Rows {
		want := report.VerdictNA
		if strings.HasPrefix(r.Metric, "Mean ") {
			want = report.VerdictSignificant
		}
		if r.Verdict[1] != want {
			t.Errorf("%s: verdict %q, want %q", r.Label(), r.Verdict[1], want)
		}
	}
}

func TestMetricKeysAndScroll(t *testing.T) {
	m := newCompare(t, fixture.ServeDoc("A", 50, 4, 1, 0), fixture.ServeDoc("B", 50, 4, 1.5, 1))
	m.SetSize(80, 21)
	seen := map[string]bool{}
	for range 4 {
		seen[m.Comparison().Rows[m.hists[m.hist]].Metric] = true
		m, _ = m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	}
	for _, w := range []string{"Mean TTFT (ms)", "Mean TPOT (ms)", "Mean ITL (ms)", "Mean E2EL (ms)"} {
		if !seen[w] {
			t.Errorf("m never showed %s (saw %v)", w, seen)
		}
	}
	if m.hist != 0 {
		t.Errorf("m did not cycle back: %d", m.hist)
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	if m.hist != 3 {
		t.Errorf("← went to %d, want 3", m.hist)
	}
	for range 30 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if v := m.View(); !strings.Contains(v, "P99 E2EL") {
		t.Errorf("↓ did not scroll to the last metric:\n%s", v)
	}
}

func TestSetRefusesOneRun(t *testing.T) {
	m := New(theme.New(theme.ASCII))
	if err := m.Set([]result.Document{fixture.BenchDoc("A", 1, 0)}); err == nil {
		t.Error("one run compared")
	}
	if m.Runs() != 0 {
		t.Error("a failed Set changed the screen")
	}
}

// TestTinySizes: the screen draws exactly the lines it is given, down to 1×1.
func TestTinySizes(t *testing.T) {
	m := newCompare(t, fixture.ServeDoc("A", 50, 4, 1, 0), fixture.ServeDoc("B", 50, 4, 1.5, 1), fixture.BenchDoc("C", 1, 2))
	for _, sz := range [][2]int{{1, 1}, {12, 4}, {30, 8}, {79, 21}} {
		m.SetSize(sz[0], sz[1])
		if n := len(strings.Split(m.View(), "\n")); n != sz[1] {
			t.Errorf("%v: %d lines", sz, n)
		}
	}
}

// TestHistogramTitleAndNA: the overlay is titled by the distribution it draws (the
// per-request TTFT, not "Mean TTFT"), and a table with n/a verdicts says what n/a
// means.
func TestHistogramTitleAndNA(t *testing.T) {
	m := newCompare(t, fixture.ServeDoc("A", 50, 4, 1, 0), fixture.ServeDoc("B", 50, 4, 2, 1))
	m.SetSize(160, 45)
	v := m.View()
	if !strings.Contains(v, "TTFT (ms) per request: A") || strings.Contains(v, "Mean TTFT (ms): A") {
		t.Errorf("histogram title:\n%s", v)
	}
	if !strings.Contains(v, "n/a: no verdict: one figure per run") {
		t.Errorf("n/a is not explained:\n%s", v)
	}
	b := newCompare(t, fixture.BenchDoc("A", 1, 0), fixture.BenchDoc("B", 1.25, 1))
	b.SetSize(160, 45)
	if v := b.View(); !strings.Contains(v, "pp512 t/s per repetition: A") || strings.Contains(v, "n/a: no verdict") {
		t.Errorf("bench compare:\n%s", v)
	}
}

// TestThroughputRuns: two throughput runs compare row by row: each dtype's
// JetStream tok/s with its % diff, then the row's serving figures.
func TestThroughputRuns(t *testing.T) {
	m := newCompare(t, fixture.ThroughputDoc("tput A", 40, 0), fixture.ThroughputDoc("tput B", 50, 5))
	m.SetSize(120, 40)
	v := m.View()
	for _, s := range []string{"bfloat16 throughput (token/s)", "int8 throughput (token/s)", "+25.0 %", "int8 weights + KV (MiB)", "bfloat16 Mean TTFT (ms)"} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
}
