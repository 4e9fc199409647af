package tokenizer

import (
	"os"

	"llmbench/engine/gguf"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modelsDir = "../../../shared/models"

var _ Metadata = (*gguf.File)(nil)

func vocabDir(t testing.TB) string {
	dir := filepath.Join(modelsDir, "llama.cpp-vocab")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared fixtures absent (%s): %v", dir, err)
	}
	return dir
}

func loadTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tok
}

// readCases returns the inputs and expected ids of a llama.cpp vocab test.
func readCases(t testing.TB, base string) ([]string, [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	outb, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	texts := strings.Split(string(inp), sep)
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs but %d output lines", base, len(texts), len(lines))
	}
	want := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			want[i] = append(want[i], int32(v))
		}
	}
	return texts, want
}

// TestLlamaCppVocabs runs every case of every llama.cpp vocab test whose
// vocab GGUF is present.
func TestLlamaCppVocabs(t *testing.T) {
	dir := vocabDir(t)
	inps, _ := filepath.Glob(filepath.Join(dir, "*.gguf.inp"))
	if len(inps) == 0 {
		t.Skip("no vocab tests found")
	}
	for _, inp := range inps {
		base := strings.TrimSuffix(inp, ".inp")
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(base), "ggml-vocab-"), ".gguf")
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(base); err != nil {
				t.Skipf("vocab GGUF absent: %s", filepath.Base(base))
			}
			md, err := gguf.Open(base)
			if err != nil {
				t.Fatal(err)
			}
			defer md.Close()
			tok, err := FromGGUF(md)
			if err != nil {
				if m, _ := md.String(kModel); m == "bert" {
					t.Skipf("WordPiece not implemented: %v", err)
				}
				t.Fatal(err)
			}
			texts, want := readCases(t, base)
			pass := 0
			for i, text := range texts {
				got := tok.Encode(text, false, false)
				if !slices.Equal(got, want[i]) {
					t.Errorf("case %d %q:\n got  %v\n want %v", i, text, got, want[i])
					continue
				}
				pass++
			}
			t.Logf("%s: %d/%d cases pass", name, pass, len(texts))
		})
	}
}

// TestAbsentVocabSplits runs the llama-bpe and qwen2 test inputs, whose
// vocab GGUFs are not in the fixtures, through their pre-tokenizers: the
// words must cover the text exactly, and no case may have more words than
// llama.cpp's expected ids (every word yields at least one token).
func TestAbsentVocabSplits(t *testing.T) {
	dir := vocabDir(t)
	for name, pre := range map[string]string{"llama-bpe": "llama-bpe", "qwen2": "qwen2"} {
		base := filepath.Join(dir, "ggml-vocab-"+name+".gguf")
		if _, err := os.Stat(base + ".inp"); err != nil {
			continue
		}
		tok := mustTok(t, bpeMeta(pre))
		texts, want := readCases(t, base)
		for i, text := range texts {
			var joined strings.Builder
			words := tok.pretokenize(text)
			for _, w := range words {
				joined.Write(tok.decodeByteLevel(w))
			}
			if joined.String() != text {
				t.Errorf("%s case %d: words %q do not cover %q", name, i, words, text)
			}
			if len(words) > len(want[i]) {
				t.Errorf("%s case %d %q: %d words but only %d expected ids", name, i, text, len(words), len(want[i]))
			}
		}
	}
}
