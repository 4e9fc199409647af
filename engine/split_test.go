package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/gguf"
)

// splitGreedy loads the model at path and returns its greedy 32-token text after
// "Once upon a time".
func splitGreedy(t *testing.T, path string, opts Options) string {
	t.Helper()
	e, err := Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var b strings.Builder
	st, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", MaxTokens: 32, IgnoreEOS: true}, func(tok Token) error {
		b.WriteString(tok.Text)
		return nil
	})
	if err != nil || st.GenTokens != 32 {
		t.Fatalf("generated %d tokens: %v", st.GenTokens, err)
	}
	return b.String()
}

// TestSplitModelGeneratesTheSameText writes the built-in model in 3 parts as
// llama.cpp's gguf-split does, loads it from its first part (mapped and read into
// memory) and compares the greedy text with the unsplit file's; with a part gone,
// loading fails in one line naming it.
func TestSplitModelGeneratesTheSameText(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "stories260K.gguf")
	if err := os.WriteFile(whole, builtin.Stories260K, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(whole)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	paths, err := gguf.WriteSplit(src, filepath.Join(dir, "model"), 3)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Threads: 1, Context: 64}
	want := splitGreedy(t, whole, opts)
	if want == "" {
		t.Fatal("the unsplit model generated no text")
	}
	for _, noMmap := range []bool{false, true} {
		opts.NoMmap = noMmap
		if got := splitGreedy(t, paths[0], opts); got != want {
			t.Errorf("no-mmap %v: split model's text differs\n got: %q\nwant: %q", noMmap, got, want)
		}
	}
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), paths[0], Options{Threads: 1})
	if want := "gguf: " + paths[1] + ": missing (part 2 of 3)"; err == nil || err.Error() != want {
		t.Errorf("missing part: err = %v, want %q", err, want)
	}
}
