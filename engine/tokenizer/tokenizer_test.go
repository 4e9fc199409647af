package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testMeta is a map-backed Metadata.
type testMeta map[string]any

func (m testMeta) String(k string) (string, bool)      { v, ok := m[k].(string); return v, ok }
func (m testMeta) Strings(k string) ([]string, bool)   { v, ok := m[k].([]string); return v, ok }
func (m testMeta) Float32s(k string) ([]float32, bool) { v, ok := m[k].([]float32); return v, ok }
func (m testMeta) Int32s(k string) ([]int32, bool)     { v, ok := m[k].([]int32); return v, ok }
func (m testMeta) Bool(k string) (bool, bool)          { v, ok := m[k].(bool); return v, ok }
func (m testMeta) Uint(k string) (uint64, bool)        { v, ok := m[k].(uint64); return v, ok }

// spmMeta is a tiny SentencePiece vocabulary with all 256 byte tokens.
func spmMeta() testMeta {
	toks := []string{"<unk>", "<s>", "</s>"}
	types := []int32{typeUnknown, typeControl, typeControl}
	scores := []float32{0, 0, 0}
	for b := 0; b < 256; b++ {
		toks = append(toks, fmt.Sprintf("<0x%02X>", b))
		types = append(types, typeByte)
		scores = append(scores, 0)
	}
	words := []struct {
		s     string
		score float32
	}{
		{"▁", -1}, {"a", -2}, {"b", -2}, {"c", -2}, {"ab", -3}, {"▁a", -1.5}, {"▁ab", -0.5},
		{"bc", -0.1}, {"▁t", -1}, {"he", -1}, {"▁the", -0.2}, {"▁th", -0.9}, {"<|user|>", 0},
	}
	for _, w := range words {
		toks = append(toks, w.s)
		scores = append(scores, w.score)
		typ := int32(typeNormal)
		if w.s == "<|user|>" {
			typ = typeUserDefined
		}
		types = append(types, typ)
	}
	return testMeta{
		kModel: "llama", kTokens: toks, kScores: scores, kTypes: types,
		"tokenizer.ggml.bos_token_id": uint64(1), "tokenizer.ggml.eos_token_id": uint64(2),
	}
}

// bpeMeta is a tiny byte-level BPE vocabulary: the 256 byte characters, a few
// merges and an end-of-text control token.
func bpeMeta(pre string) testMeta {
	var toks []string
	var enc [256]string
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) {
			r = rune(256 + n)
			n++
		}
		enc[b] = string(r)
	}
	toks = append(toks, enc[:]...)
	merges := []string{"h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor ld", "l d"}
	for _, m := range merges {
		toks = append(toks, strings.ReplaceAll(m, " ", ""))
	}
	toks = append(toks, "<|endoftext|>")
	types := make([]int32, len(toks))
	for i := range types {
		types[i] = typeNormal
	}
	types[len(types)-1] = typeControl
	eot := uint64(len(toks) - 1)
	return testMeta{
		kModel: "gpt2", kPre: pre, kTokens: toks, kTypes: types, kMerges: merges,
		"tokenizer.ggml.bos_token_id": eot, "tokenizer.ggml.eos_token_id": eot,
	}
}

func mustTok(t testing.TB, md Metadata) *Tokenizer {
	t.Helper()
	tok, err := FromGGUF(md)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (t *Tokenizer) ids2str(ids []int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, t.Token(id))
	}
	return strings.Join(s, " ")
}

func TestSPMEncode(t *testing.T) {
	tok := mustTok(t, spmMeta())
	cases := []struct {
		text         string
		add, special bool
		want         string
	}{
		{"", false, false, ""},
		{"", true, false, "<s>"},
		{"ab", false, false, "▁ab"},
		{"ab", true, false, "<s> ▁ab"},
		{"the", false, false, "▁the"},
		{"abc", false, false, "▁a bc"}, // "bc" outscores "▁ab"
		{" a", false, false, "▁ ▁a"},
		{"é", false, false, "▁ <0xC3> <0xA9>"},
		{"a</s>b", false, false, "▁a <0x3C> <0x2F> <0x73> <0x3E> b"},
		{"a</s>b", false, true, "▁a </s> ▁ b"},
		{"a<|user|>b", false, false, "▁a <|user|> ▁ b"}, // user-defined: always parsed
	}
	for _, c := range cases {
		got := tok.ids2str(tok.Encode(c.text, c.add, c.special))
		if got != c.want {
			t.Errorf("Encode(%q, %v, %v) = %s, want %s", c.text, c.add, c.special, got, c.want)
		}
	}
	if tok.Model() != "llama" || tok.BOS() != 1 || tok.EOS() != 2 || !tok.AddBOS() || tok.AddEOS() || !tok.IsEOG(2) || tok.IsEOG(1) {
		t.Errorf("metadata: model %q bos %d eos %d addBOS %v addEOS %v", tok.Model(), tok.BOS(), tok.EOS(), tok.AddBOS(), tok.AddEOS())
	}
	if got := tok.Decode(tok.Encode("abc é", true, false)); got != " abc é" {
		t.Errorf("Decode = %q", got)
	}
	if got := tok.Detokenize(tok.Encode("abc é", false, false), false, false); got != "abc é" {
		t.Errorf("Detokenize = %q", got)
	}
	if p := tok.Piece(1); len(p) != 0 {
		t.Errorf("Piece(<s>) = %q, want empty", p)
	}
	if got := tok.Detokenize([]int32{1, 2}, false, true); got != "<s></s>" {
		t.Errorf("Detokenize(unparse) = %q", got)
	}
}

func TestSPMAddEOSAndNoPrefix(t *testing.T) {
	md := spmMeta()
	md[kAddEOS] = true
	md[kAddBOS] = false
	md[kAddPrefix] = false
	tok := mustTok(t, md)
	if got := tok.ids2str(tok.Encode("ab", true, false)); got != "ab </s>" {
		t.Errorf("got %s", got)
	}
}

func TestBPEEncode(t *testing.T) {
	tok := mustTok(t, bpeMeta("gpt-2"))
	cases := []struct {
		text    string
		special bool
		want    string
	}{
		{"hello world", false, "hello Ġworld"},
		{"hello  world", false, "hello Ġ Ġworld"},
		{"hello<|endoftext|>", false, "hello < | e n d o f t e x t | >"},
		{"hello<|endoftext|>", true, "hello <|endoftext|>"},
		{"é", false, "Ã ©"},
	}
	for _, c := range cases {
		got := tok.ids2str(tok.Encode(c.text, true, c.special))
		if got != c.want {
			t.Errorf("Encode(%q) = %s, want %s", c.text, got, c.want)
		}
	}
	if tok.AddBOS() {
		t.Error("gpt2 must not add BOS by default")
	}
	for _, s := range []string{"hello world", "é ü 日本 🦙", "a\n\n\tb  "} {
		if got := tok.Decode(tok.Encode(s, false, false)); got != s {
			t.Errorf("round trip %q -> %q", s, got)
		}
	}
	// clean_spaces is on for gpt-2: " ," loses its space.
	if got := tok.Detokenize(tok.Encode("a , b 's", false, false), false, false); got != "a, b's" {
		t.Errorf("Detokenize clean = %q", got)
	}
}

func TestFromGGUFErrors(t *testing.T) {
	dup := spmMeta()
	dup[kTokens] = append(slices.Clone(dup[kTokens].([]string)[:3]), "<s>")
	dup[kScores] = []float32{0, 0, 0, 0}
	dup[kTypes] = []int32{2, 3, 3, 1}
	noMerges := bpeMeta("gpt-2")
	delete(noMerges, kMerges)
	short := spmMeta()
	short[kScores] = []float32{1}
	noBOS := bpeMeta("gpt-2")
	noBOS[kTokens] = []string{"a", "b"}
	noBOS[kTypes] = []int32{1, 1}
	noBOS[kMerges] = []string{"a b"}
	delete(noBOS, "tokenizer.ggml.bos_token_id")
	noBOS[kAddBOS] = true
	cases := []struct {
		name string
		md   testMeta
		want string
	}{
		{"no model", testMeta{}, "missing tokenizer.ggml.model"},
		{"bert", testMeta{kModel: "bert"}, "WordPiece"},
		{"t5", testMeta{kModel: "t5"}, "unsupported vocabulary type"},
		{"bad pre", bpeMeta("nonsense"), `unsupported pre-tokenizer tokenizer.ggml.pre = "nonsense"`},
		{"no tokens", testMeta{kModel: "llama"}, "missing tokenizer.ggml.tokens"},
		{"duplicate", dup, "duplicate token"},
		{"no merges", noMerges, "missing tokenizer.ggml.merges"},
		{"short scores", short, "tokenizer.ggml.scores has 1 entries"},
		{"add_bos without bos", noBOS, "no BOS token"},
	}
	for _, c := range cases {
		_, err := FromGGUF(c.md)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestAllPreTokenizersCompile(t *testing.T) {
	for _, pre := range []string{"", "default", "gpt-2", "llama3", "llama-bpe", "qwen2", "deepseek-llm",
		"deepseek-coder", "falcon", "starcoder", "mpt", "refact", "olmo", "dbrx", "smaug-bpe",
		"stablelm2", "command-r", "smollm", "chatglm-bpe", "gpt-4o", "llama4"} {
		tok, err := FromGGUF(bpeMeta(pre))
		if err != nil {
			t.Errorf("pre %q: %v", pre, err)
			continue
		}
		if tok.Pre() != pre {
			t.Errorf("Pre() = %q", tok.Pre())
		}
		s := "Hello, wörld! 123 🦙\n"
		if got := tok.Decode(tok.Encode(s, false, false)); got != s {
			t.Errorf("pre %q: round trip %q", pre, got)
		}
	}
}

// TestPreTokenizerSplits checks the word splits of the regex lists,
// including llama-3 and qwen2 whose vocabularies are not in the fixtures.
func TestPreTokenizerSplits(t *testing.T) {
	cases := []struct {
		pre, text string
		want      []string
	}{
		{"llama3", "Hello world", []string{"Hello", " world"}},
		{"llama3", "   Hello", []string{"  ", " Hello"}},
		{"llama3", "3333333", []string{"333", "333", "3"}},
		{"llama3", "don't DON'T", []string{"don", "'t", " DON", "'T"}},
		{"llama3", "a  \n b", []string{"a", "  \n", " b"}},
		{"llama3", "!!!\n\nx", []string{"!!!\n\n", "x"}},
		{"llama3", "$1000", []string{"$", "100", "0"}},
		{"llama3", "🦙llama", []string{"🦙llama"}},
		{"llama3", "Hello\n\nworld", []string{"Hello", "\n\n", "world"}},
		{"llama3", "\t\tx", []string{"\t", "\tx"}},
		{"llama3", "  ", []string{"  "}},
		{"qwen2", "3333333", []string{"3", "3", "3", "3", "3", "3", "3"}},
		{"qwen2", "Hello world 12", []string{"Hello", " world", " ", "1", "2"}},
		{"qwen2", "I'm   here.\n", []string{"I", "'m", "  ", " here", ".\n"}},
		{"gpt-2", "I'm   here.\n", []string{"I", "'m", "  ", " here", ".", "\n"}},
		{"gpt-2", "DON'T 123", []string{"DON", "'", "T", " 123"}},
		{"starcoder", "x 123", []string{"x", " ", "1", "2", "3"}},
		{"deepseek-coder", "a1\nb", []string{"a", "1", "\n", "b"}},
		{"falcon", "a 12345", []string{"a", " ", "123", "45"}},
		// gpt-4o (o200k: gpt-oss, llama4): letter runs split at a case change, the
		// contraction a suffix of its word, digits in threes, '/' after punctuation kept
		{"gpt-4o", "Hello world", []string{"Hello", " world"}},
		{"gpt-4o", "HelloWorld CamelCASEWord", []string{"Hello", "World", " Camel", "CASEWord"}},
		{"gpt-4o", "I'm DON'T", []string{"I'm", " DON'T"}},
		{"gpt-4o", "1234567", []string{"123", "456", "7"}},
		{"gpt-4o", "a.\n/b", []string{"a", ".\n/", "b"}},
		{"gpt-4o", "x  \n y", []string{"x", "  \n", " y"}},
	}
	for _, c := range cases {
		tok := mustTok(t, bpeMeta(c.pre))
		var got []string
		for _, w := range tok.pretokenize(c.text) {
			got = append(got, string(tok.decodeByteLevel(w)))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %q, want %q", c.pre, c.text, got, c.want)
		}
	}
}

func TestStreamDecoder(t *testing.T) {
	tok := mustTok(t, spmMeta())
	ids := tok.Encode("ab é🦙c", true, false)
	d := NewStreamDecoder(tok)
	var chunks []string
	for _, id := range ids {
		if s := d.Add(id); s != "" {
			chunks = append(chunks, s)
		}
	}
	if s := d.Flush(); s != "" {
		chunks = append(chunks, s)
	}
	if got := strings.Join(chunks, ""); got != " ab é🦙c" {
		t.Errorf("stream = %q", got)
	}
	for _, c := range chunks {
		if !utf8Valid(c) {
			t.Errorf("chunk %q is not valid UTF-8", c)
		}
	}
	// An unfinished character is returned by Flush.
	d.Add(tok.Encode("é", false, false)[1])
	if s := d.Flush(); s != "\xc3" {
		t.Errorf("Flush = %q", s)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\ufffd") == s }

func TestIncompleteTail(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0}, {"a", 0}, {"\xc3", 1}, {"a\xe6\x97", 2}, {"\xf0\x9f\xa6", 3}, {"\xf0\x9f\xa6\x99", 0},
		{"\x80", 0}, {"\xe0\x80", 0}, {"é", 0},
	}
	for _, c := range cases {
		if got := incompleteTail([]byte(c.in)); got != c.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestCleanSpaces(t *testing.T) {
	cases := map[string]string{
		"":                "",
		"a , b . c ? d !": "a, b. c? d!",
		"it 's i 'm":      "it's i'm",
		"we 're they 've": "we're they've",
		"don 't he 'd":    "don 't he 'd",
		"a ' b":           "a'b",
		"x":               "x",
	}
	for in, want := range cases {
		if got := string(cleanSpaces([]byte(in))); got != want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", "é 日本 🦙", "a\n\n\tb  ", "\xff\xc3", "<|user|></s>", "'s 're 123456"} {
		f.Add(s)
	}
	spm := mustTok(f, spmMeta())
	bpes := []*Tokenizer{mustTok(f, bpeMeta("gpt-2")), mustTok(f, bpeMeta("llama3")), mustTok(f, bpeMeta("deepseek-llm"))}
	f.Fuzz(func(t *testing.T, s string) {
		for _, special := range []bool{false, true} {
			ids := spm.Encode(s, true, special)
			// Invalid UTF-8 can swallow a ▁ into byte fallback, as in llama.cpp.
			if utf8Valid(s) && !strings.Contains(s, "<") {
				want := s
				if s != "" {
					want = " " + s
				}
				if got := spm.Decode(ids); got != want {
					t.Fatalf("SPM round trip %q -> %q (%v)", s, got, ids)
				}
			}
			for _, b := range bpes {
				ids := b.Encode(s, false, special)
				for _, id := range ids {
					if id < 0 || int(id) >= b.VocabSize() {
						t.Fatalf("id %d out of range", id)
					}
				}
				if utf8Valid(s) && !strings.Contains(s, "<|endoftext|>") {
					if got := b.Decode(ids); got != s {
						t.Fatalf("BPE(%s) round trip %q -> %q", b.Pre(), s, got)
					}
				}
			}
		}
	})
}
