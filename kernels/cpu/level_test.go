package cpu

import (
	"strings"
	"testing"

	"llmbench/kernels"
)

func TestParseLevel(t *testing.T) {
	for v, want := range map[string]cpuCap{"": capBest, "go": capGo, "avx2": capAVX2, "avxvnni": capAVXVNNI, "AVX512": capAVX512, " avx2 ": capAVX2, "amx": capBest} {
		got, err := parseLevel(v)
		if err != nil || got != want {
			t.Errorf("parseLevel(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"avx", "amx512", "avx512vnni", "sse"} {
		_, err := parseLevel(v)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), EnvLevel) {
			t.Errorf("parseLevel(%q): error %v, want one line naming %s", v, err, EnvLevel)
		}
	}
}

// TestLevelCap checks that the dispatch level stays under LLMBENCH_CPU's ceiling (run
// the package's tests with LLMBENCH_CPU=go, avx2, avxvnni or avx512 to cover each path).
func TestLevelCap(t *testing.T) {
	rank := map[string]cpuCap{"go": capGo, "avx2": capAVX2, "avx512vnni": capAVX512}
	if r, ok := rank[level]; !ok || !allowed(r) {
		t.Fatalf("level %q under ceiling %d", level, levelCap)
	}
	if h := halfKerns[kernels.F16]; !allowed(capAVX512) && (tileFmts[kernels.MXFP4].x4 != nil || h.x4 != nil && h.lanes != 8) {
		t.Fatalf("AVX-512 kernels installed under ceiling %d", levelCap)
	}
	if !allowed(capAVXVNNI) && len(avxVNNI) != 0 {
		t.Fatalf("AVX-VNNI kernels installed under ceiling %d", levelCap)
	}
	if !allowed(capAVX2) && tileX4 != nil {
		t.Fatalf("tile kernels installed under ceiling %d", levelCap)
	}
	if !allowed(capAVX2) && len(fastDots) != 0 {
		t.Fatalf("assembly dot products installed under ceiling %d", levelCap)
	}
}
