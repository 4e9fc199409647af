package main

import (
	"strings"
	"testing"
)

// TestSynthListGptOSS checks that the synth plan lists the full-size gpt-oss shapes at
// llama.cpp's parameter counts (llama-bench: "gpt-oss 120B … 116.83 B"; gpt-oss-20b
// 20.91 B) without writing them.
func TestSynthListGptOSS(t *testing.T) {
	out, stderr, code := run(t, "model", "synth", "--list")
	for _, want := range []string{"gpt-oss-20b        20.91 B parameters", "gpt-oss-120b       116.83 B parameters"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("synth --list lacks %q: exit %d: %s%s", want, code, out, stderr)
		}
	}
}
