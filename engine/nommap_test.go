package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"llmbench/engine/builtin"
)

// TestLoadNoMmap checks llama-bench's -mmp 0: the file read into memory gives the
// same model (same logits) as the mapped file.
func TestLoadNoMmap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := os.WriteFile(path, builtin.Stories260K, 0o644); err != nil {
		t.Fatal(err)
	}
	logits := func(noMmap bool) []float32 {
		e, err := Load(context.Background(), path, Options{Threads: 1, Context: 16, NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s, err := e.NewSession(8)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Eval([]int32{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(out)
	}
	if a, b := logits(false), logits(true); !slices.Equal(a, b) {
		t.Error("logits differ between the mapped and the read model")
	}
	if _, err := Load(context.Background(), path+".missing", Options{NoMmap: true}); err == nil {
		t.Error("a missing file loaded")
	}
}
