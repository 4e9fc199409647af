package main

import (
	"os"
	"strings"
	"testing"
)

// TestModelInfoSynthMetadataOnly: model info on full-size synthetic shapes reads their
// metadata alone (issue 17): qwen3moe-30b-a3b prints llama-bench's 30.53 B parameters
// and 17.28 GiB, gpt-oss-120b 116.83 B, with the experts line; no weights are written
// and no temporary file is left; a malformed id is one line.
func TestModelInfoSynthMetadataOnly(t *testing.T) {
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	for _, c := range []struct {
		id   string
		want []string
	}{
		{"synth:qwen3moe-30b-a3b:Q4_K_M", []string{"(metadata only: no weights written) (17.28 GiB)", "parameters:    30,532,122,624 (30.53 B)",
			"experts:       128, 8 per token, feed-forward 768 each (3.35 B parameters active per token)"}},
		{"synth:gpt-oss-120b:MXFP4_MOE", []string{"parameters:    116,829,156,672 (116.83 B)", "architecture:  gpt-oss", "experts:       128, 4 per token"}},
	} {
		out, stderr, code := runEnv(t, env, "model", "info", c.id)
		for _, w := range c.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("model info %s lacks %q: exit %d\n%s%s", c.id, w, code, out, stderr)
			}
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, stderr, code := runEnv(t, env, "model", "info", "synth:qwen3moe-30b-a3b"); code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "want synth:SHAPE:TYPE") {
		t.Errorf("a malformed id: exit %d, %q", code, stderr)
	}
}
