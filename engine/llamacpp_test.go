package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"llmbench/engine/synth"
)

// replaceInvalid replaces each byte of s that is not part of valid UTF-8 with U+FFFD,
// as node-llama-cpp's text does with the byte tokens a random model strings together
// (for lone or mismatched bytes, the cases these texts hold, per byte is what its
// decoder does).
func replaceInvalid(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError, one byte wide
	}
	return b.String()
}

// greedyMatchesLlamaCpp generates 32 greedy tokens from "Once upon a time" on a
// synthetic model (shape, mix typ, seed) and compares the continuation with what
// llama.cpp generated from the same file, kept in ref. When the environment variable
// env names a folder, the model is also written there as name, to remake the reference
// (engine/testdata/README-qwen3.md says how).
func greedyMatchesLlamaCpp(t *testing.T, shape synth.Shape, typ string, seed uint64, ref, env, name string) {
	t.Helper()
	greedyFileMatchesLlamaCpp(t, writeSynth(t, typ, seed, shape), ref, env, name)
}

// greedyFileMatchesLlamaCpp is greedyMatchesLlamaCpp for the model file at path.
func greedyFileMatchesLlamaCpp(t *testing.T, path, ref, env, name string) {
	t.Helper()
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv(env); dir != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Load(context.Background(), path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var b strings.Builder
	st, err := e.Generate(context.Background(), Request{Tokens: e.Tok.Encode("Once upon a time", true, true), MaxTokens: 32, IgnoreEOS: true}, func(tok Token) error {
		b.WriteString(tok.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.GenTokens != 32 {
		t.Errorf("generated %d tokens, want 32", st.GenTokens)
	}
	got := replaceInvalid(b.String())
	if got != string(want) {
		t.Errorf("greedy text differs from llama.cpp's recorded text\n got: %q\nwant: %q", got, want)
	}
	if testing.Short() {
		return // llama.cpp takes seconds a model to start: the full run (make test's first pass) asks it
	}
	live, err := llamaCppGreedy(t, path)
	switch {
	case err != nil:
		t.Fatal(err)
	case live == nil:
		t.Logf("node-llama-cpp is not installed in %s (.ci/run installs it): compared with the recorded text only", nodeLlamaCppDir)
	case string(live) != got:
		t.Errorf("greedy text differs from llama.cpp's, run now on the same file\n got: %q\nwant: %q", got, live)
	}
}

// nodeLlamaCppDir is where .ci/run installs node-llama-cpp (npm, prebuilt CPU
// binaries), relative to this package.
const nodeLlamaCppDir = "../tools/node-llama-cpp"

// llamaCppGreedy runs llama.cpp (node-llama-cpp, testdata/greedy32_llamacpp.mjs) on the
// model at path and returns its 32-token greedy continuation of "Once upon a time";
// nil, nil when node or node-llama-cpp is not installed.
func llamaCppGreedy(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(nodeLlamaCppDir, "node_modules", "node-llama-cpp", "package.json")); err != nil {
		return nil, nil
	}
	script, err := filepath.Abs(filepath.Join("testdata", "greedy32_llamacpp.mjs"))
	if err != nil {
		return nil, err
	}
	model, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, model)
	cmd.Dir = nodeLlamaCppDir // the script resolves node-llama-cpp from its working folder
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node-llama-cpp on %s: %v: %s", filepath.Base(path), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
