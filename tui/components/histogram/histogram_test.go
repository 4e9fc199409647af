package histogram

import (
	"strings"
	"testing"

	"llmbench/tui/theme"
)

func TestPercentileLinear(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {50, 2.5}, {100, 4}, {90, 3.7}} {
		if got := Percentile(s, tc.p); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty percentile")
	}
}

func TestBucketsCountEverySample(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []float64
	}{
		{"wide", []float64{1, 3, 7, 20, 45, 90, 300, 1000, 5000}},
		{"narrow", []float64{200, 201, 205, 210, 260}},
		{"one value", []float64{48, 48, 48}},
		{"zeros", []float64{0, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(theme.New(theme.ASCII), "ms")
			m.SetSize(40, 6)
			for _, v := range tc.vals {
				m.Add(v)
			}
			bs := m.Buckets()
			if len(bs) == 0 || len(bs) > 5 {
				t.Fatalf("%d buckets for h=6", len(bs))
			}
			if m.Count() != int64(len(tc.vals)) {
				t.Errorf("count %d, want %d", m.Count(), len(tc.vals))
			}
			lines := strings.Split(m.View(), "\n")
			if len(lines) != 6 || !strings.HasPrefix(lines[5], "p50 ") {
				t.Errorf("view:\n%s", m.View())
			}
		})
	}
}

func TestEmptyAndGiven(t *testing.T) {
	m := New(theme.New(theme.ASCII), "ms")
	if !strings.Contains(m.View(), "waiting") {
		t.Error("empty view")
	}
	m.SetBuckets([]Bucket{{Lo: 10, Hi: 11, Count: 3}, {Lo: 100, Hi: 101, Count: 1}}, 10, 100, 100)
	if m.Count() != 4 {
		t.Errorf("given count %d", m.Count())
	}
	if p50, _, p99 := m.Percentiles(); p50 != 10 || p99 != 100 {
		t.Errorf("given percentiles %v %v", p50, p99)
	}
}
