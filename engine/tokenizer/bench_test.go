package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const benchText = `Once upon a time, there was a little girl named Lily. She loved to play outside in the park.
One day, she saw a big, red ball. "Can I play?" she asked. The café's menu: 3 crêpes for $12.50 — 日本語 🦙!
func main() { for i := 0; i < 10; i++ { fmt.Println(i) } }
`

// BenchmarkEncode measures Encode on mixed prose, code and non-Latin text
// for the fake vocabularies and, when present, the llama.cpp vocabularies.
func BenchmarkEncode(b *testing.B) {
	text := strings.Repeat(benchText, 8)
	toks := []struct {
		name string
		tok  *Tokenizer
	}{
		{"fake-spm", mustTok(b, spmMeta())},
		{"fake-gpt2", mustTok(b, bpeMeta("gpt-2"))},
	}
	for _, v := range []string{"llama-spm", "gpt-2", "deepseek-llm", "falcon"} {
		path := filepath.Join(modelsDir, "llama.cpp-vocab", "ggml-vocab-"+v+".gguf")
		if _, err := os.Stat(path); err == nil {
			toks = append(toks, struct {
				name string
				tok  *Tokenizer
			}{v, loadTokenizer(b, path)})
		}
	}
	for _, c := range toks {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				c.tok.Encode(text, true, false)
			}
		})
	}
}

// BenchmarkDecode measures Decode of the ids of the benchmark text.
func BenchmarkDecode(b *testing.B) {
	tok := mustTok(b, spmMeta())
	ids := tok.Encode(strings.Repeat(benchText, 8), true, false)
	b.SetBytes(int64(len(ids)))
	for b.Loop() {
		tok.Decode(ids)
	}
}
