package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRealModels checks the prompt of the reference runs against the ids
// llama.cpp produces for it (BOS added, default space prefix).
func TestRealModels(t *testing.T) {
	cases := []struct {
		file    string
		text    string
		want    []int32
		eos     int32
		decoded string
	}{
		{"stories260K.gguf", "Once upon a time", []int32{1, 403, 407, 261, 378}, 2, " Once upon a time"},
		{"tinystories-656k-q8_0.gguf", "Once upon a time", []int32{1, 80, 147, 201, 282, 57}, 2, " Once upon a time"},
		{"TinyStories-656K.f16.gguf", "Once upon a time", []int32{1, 80, 147, 201, 282, 57}, 2, " Once upon a time"},
		{"tinystories-656k-q8_0.gguf", "Hello world", []int32{1, 80, 1288, 139, 410, 555}, 2, " Hello world"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(modelsDir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("model absent: %v", err)
			}
			tok := loadTokenizer(t, path)
			if !tok.AddBOS() {
				t.Errorf("AddBOS() = false, want true")
			}
			got := tok.Encode(c.text, true, false)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Encode(%q) = %v, want %v", c.text, got, c.want)
			}
			if d := tok.Decode(got); d != c.decoded {
				t.Errorf("Decode = %q, want %q", d, c.decoded)
			}
			// llama.cpp keeps the space when it removes a leading BOS, and
			// strips it when the ids start with the text itself.
			if d := tok.Detokenize(got, true, false); d != c.decoded {
				t.Errorf("Detokenize(removeSpecial) = %q, want %q", d, c.decoded)
			}
			if d := tok.Detokenize(got[1:], false, false); d != c.text {
				t.Errorf("Detokenize(no BOS) = %q, want %q", d, c.text)
			}
			if tok.EOS() != c.eos || !tok.IsEOG(c.eos) {
				t.Errorf("EOS = %d (IsEOG %v), want %d", tok.EOS(), tok.IsEOG(c.eos), c.eos)
			}
		})
	}
}
