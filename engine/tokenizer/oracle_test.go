package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// oracle holds ids produced by llama.cpp itself (node-llama-cpp 3.22, vocab
// only) for random mixed-script strings: plain is add_special=false,
// parse_special=false; special is parse_special=true; detok is
// llama_detokenize(plain) without special handling. A null entry means
// llama.cpp aborted on that input (SPM vocab without byte tokens).
type oracle struct {
	Strings []string `json:"strings"`
	Models  map[string]struct {
		Plain   [][]int32 `json:"plain"`
		Special [][]int32 `json:"special"`
		Detok   []*string `json:"detok"`
	} `json:"models"`
}

func TestLlamaCppOracle(t *testing.T) {
	b, err := os.ReadFile("testdata/llamacpp_oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var o oracle
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	for name, m := range o.Models {
		t.Run(strings.TrimSuffix(name, ".gguf"), func(t *testing.T) {
			path := filepath.Join(modelsDir, name)
			if strings.HasPrefix(name, "ggml-vocab-") {
				path = filepath.Join(modelsDir, "llama.cpp-vocab", name)
			}
			if _, err := os.Stat(path); err != nil {
				t.Skipf("absent: %v", err)
			}
			tok := loadTokenizer(t, path)
			fails := 0
			for i, s := range o.Strings {
				if m.Plain[i] == nil {
					continue
				}
				for _, mode := range []struct {
					parse bool
					want  []int32
				}{{false, m.Plain[i]}, {true, m.Special[i]}} {
					got := tok.Encode(s, false, mode.parse)
					if !slices.Equal(got, mode.want) && fails < 10 {
						fails++
						t.Errorf("parseSpecial=%v %q:\n got  %v\n want %v", mode.parse, s, got, mode.want)
					}
				}
				if d := m.Detok[i]; d != nil {
					if got := tok.Detokenize(m.Plain[i], false, false); got != *d {
						t.Errorf("Detokenize(%v) = %q, want %q", m.Plain[i], got, *d)
					}
				}
			}
		})
	}
}
