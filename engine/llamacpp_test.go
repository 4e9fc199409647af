package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if got := replaceInvalid(b.String()); got != string(want) {
		t.Errorf("greedy text differs from llama.cpp\n got: %q\nwant: %q", got, want)
	}
}
