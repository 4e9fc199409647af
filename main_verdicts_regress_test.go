package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTTFTResult writes a vLLM-style saved result (--save-detailed) whose TTFTs are
// ttft milliseconds in request order.
func writeTTFTResult(t *testing.T, path string, ttft []float64) {
	t.Helper()
	secs := make([]float64, len(ttft))
	var mean float64
	for i, v := range ttft {
		secs[i] = v / 1000
		mean += v / float64(len(ttft))
	}
	raw, err := json.Marshal(map[string]any{"mean_ttft_ms": mean, "completed": len(ttft), "ttfts": secs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ar1TTFT returns n TTFTs (ms) around mean that drift with the load as an AR(1)
// process with autocorrelation 0.9 and a marginal standard deviation of 10 %:
// consecutive requests share queues and batches.
func ar1TTFT(rng *rand.Rand, n int, mean float64) []float64 {
	const phi = 0.9
	sd := 0.1 * mean
	out := make([]float64, n)
	e := rng.NormFloat64() * sd
	for i := range out {
		e = phi*e + sd*math.Sqrt(1-phi*phi)*rng.NormFloat64()
		out[i] = mean + e
	}
	return out
}

// TestServeBenchCompareCorrelatedVerdicts is the regression test of the A/B verdict
// (issue 11, "A/B verdicts that hold"): serve-bench --compare on 20 pairs of saved
// results whose per-request TTFTs are autocorrelated (AR(1), φ = 0.9, 1000
// requests) from the same process must say "within noise" on the mean TTFT row in
// at least 18 pairs, and with B 10 % slower "significant" in at least 18. Welch's
// t-test on the pooled requests called most same-process pairs significant.
func TestServeBenchCompareCorrelatedVerdicts(t *testing.T) {
	dir := t.TempDir()
	verdict := func(p int, shift float64) string {
		rng := rand.New(rand.NewPCG(uint64(p)+1, 0x5eed))
		a, b := ar1TTFT(rng, 1000, 100), ar1TTFT(rng, 1000, 100)
		for i := range b {
			b[i] *= 1 + shift
		}
		pa, pb := filepath.Join(dir, fmt.Sprintf("a%d.json", p)), filepath.Join(dir, fmt.Sprintf("b%d.json", p))
		writeTTFTResult(t, pa, a)
		writeTTFTResult(t, pb, b)
		out, stderr, code := run(t, "serve-bench", "--compare", pa, pb)
		if code != 0 {
			t.Fatalf("serve-bench --compare: exit %d: %s", code, stderr)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "| mean_ttft_ms ") {
				switch {
				case strings.Contains(line, "within noise"):
					return "noise"
				case strings.Contains(line, "significant"):
					return "significant"
				}
				t.Fatalf("no verdict on the mean TTFT row: %s", line)
			}
		}
		t.Fatalf("no mean_ttft_ms row:\n%s", out)
		return ""
	}
	var noise, sig int
	for p := range 20 {
		if verdict(p, 0) == "noise" {
			noise++
		}
		if verdict(p, 0.10) == "significant" {
			sig++
		}
	}
	if noise < 18 {
		t.Errorf("A/A: %d of 20 pairs within noise, want at least 18", noise)
	}
	if sig < 18 {
		t.Errorf("A/B with B 10%% slower: %d of 20 pairs significant, want at least 18", sig)
	}
	// The table says how the verdict was reached.
	pa, pb := filepath.Join(dir, "a0.json"), filepath.Join(dir, "b0.json")
	if out, _, _ := run(t, "serve-bench", "--compare", pa, pb); !strings.Contains(out, "moving-block bootstrap, 95 % CI") {
		t.Errorf("the table does not name its method:\n%s", out)
	}
}
