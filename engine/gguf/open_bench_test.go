package gguf

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"llmbench/kernels"
)

// BenchmarkOpen compares Open with OpenHeader on a file with a Qwen2-sized vocabulary
// (151936 tokens and merges) and a few small tensors: what listing models costs.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "vocab.gguf")
	fd, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := NewWriter(fd)
	w.AddKV("general.architecture", "qwen2")
	toks := make([]string, 151936)
	for i := range toks {
		toks[i] = fmt.Sprintf("tok%06d", i)
	}
	w.AddKV("tokenizer.ggml.tokens", toks)
	w.AddKV("tokenizer.ggml.merges", toks)
	w.AddKV("tokenizer.ggml.token_type", make([]int32, len(toks)))
	w.AddTensor("t", kernels.Q8_0, 32, 4)
	w.WriteHeader()
	tw, _ := w.BeginTensor("t")
	tw.Write(make([]byte, 4*34))
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	fd.Close()
	st, _ := os.Stat(path)
	for _, c := range []struct {
		name string
		open func(string) (*File, error)
	}{{"Open", Open}, {"OpenHeader", OpenHeader}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				f, err := c.open(path)
				if err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		})
	}
}
