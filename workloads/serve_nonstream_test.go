package workloads

import (
	"strings"
	"testing"
)

// TestCheckNonStreaming: under non_streaming a goodput SLO on ttft or tpot is refused
// in one line naming it; e2el is allowed, and streaming runs take all three.
func TestCheckNonStreaming(t *testing.T) {
	for _, tc := range []struct {
		ns      bool
		goodput map[string]float64
		bad     string
	}{
		{true, map[string]float64{"e2el": 500}, ""},
		{true, nil, ""},
		{true, map[string]float64{"e2el": 500, "ttft": 100}, "goodput ttft"},
		{true, map[string]float64{"tpot": 20}, "goodput tpot"},
		{false, map[string]float64{"ttft": 100, "tpot": 20, "e2el": 500}, ""},
	} {
		err := ServeSpec{NonStreaming: tc.ns, Goodput: tc.goodput}.CheckNonStreaming()
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%v %v: %v", tc.ns, tc.goodput, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "--non-streaming") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%v %v: %v, want one line with %q", tc.ns, tc.goodput, err, tc.bad)
		}
	}
}
