package results

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
)

func benchResult() *micro.Result {
	spec := workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin:stories260K"}}, Prompt: []int{512}, Gen: []int{128}, Reps: 2}.WithDefaults()
	rec := func(p, n int, ns ...uint64) micro.Record {
		return micro.Record{ModelFilename: "stories260K", ModelType: "llama ?B all F32", ModelSize: 1 << 20, ModelNParams: 292000,
			Backends: "CPU", NThreads: 2, NBatch: 2048, NUBatch: 512, TypeK: "f16", TypeV: "f16", NPrompt: p, NGen: n, SamplesNs: ns,
			BuildCommit: "dev", TestTime: "2026-11-21T00:00:00Z"}
	}
	return &micro.Result{Spec: spec, Records: []micro.Record{rec(512, 0, 2e8, 2.1e8), rec(0, 128, 5e7, 5.2e7)}}
}

func TestViews(t *testing.T) {
	for _, tc := range []struct {
		name string
		done run.Done
		want string
	}{
		{"bench", run.Done{Result: benchResult(), Elapsed: 3 * time.Second}, "✓ finished in 3.0 s"},
		{"partial", run.Done{Result: &micro.Result{Partial: true}, Partial: true}, "■ stopped early"},
		{"failed", run.Done{Err: errors.New("load: no such file")}, "✗ failed: load: no such file"},
	} {
		m := New(theme.New(theme.ASCII), nil)
		m.SetSize(80, 21)
		d := tc.done
		doc := result.Document{Title: "bench · stories260K", Partial: d.Partial}
		if r, ok := d.Result.(*micro.Result); ok {
			doc.Bench = r
		}
		m.Show(doc, "", nil, d.Err, d.Elapsed)
		if v := m.View(); !strings.Contains(v, tc.want) {
			t.Errorf("%s: view lacks %q:\n%s", tc.name, tc.want, v)
		}
		if tc.name == "bench" {
			for _, sz := range [][2]int{{80, 24}, {160, 48}} {
				m.SetSize(sz[0], sz[1]-3)
				golden.Assert(t, fmt.Sprintf("bench_%dx%d", sz[0], sz[1]), m.View())
			}
			m.SetSize(80, 21)
			m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyRight})
			if !strings.Contains(m.View(), "2499.05") {
				t.Errorf("→ did not scroll to the t/s figures:\n%s", m.View())
			}
		}
	}
}

// TestKernelsView: a kernel benchmark's report shows as its printed text.
func TestKernelsView(t *testing.T) {
	m := New(theme.New(theme.ASCII), nil)
	m.SetSize(120, 30)
	rep := &kernelbench.Report{Sections: []kernelbench.Section{{Title: "Causal Mask", Text: kernelbench.Box("Causal Mask") + "Correctness check passed ✅\n"}}}
	m.Show(result.Document{Title: "kernels · attention-masks", Kernels: rep}, "", nil, nil, time.Second)
	if v := m.View(); !strings.Contains(v, "Correctness check passed") || !strings.Contains(v, "Causal Mask") {
		t.Errorf("view:\n%s", v)
	}
}
