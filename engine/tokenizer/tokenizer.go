// Package tokenizer turns text into token ids and back, exactly as llama.cpp
// does for the vocabularies stored in GGUF metadata: SentencePiece-BPE
// (tokenizer.ggml.model = "llama": scores, <0xNN> byte fallback) and
// byte-level BPE (tokenizer.ggml.model = "gpt2": merge ranks and a
// pre-tokenizer regex chosen by tokenizer.ggml.pre).
package tokenizer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlclark/regexp2"
)

// Metadata is the read-only view of GGUF key/value metadata the tokenizer
// needs. *gguf.File satisfies it; tests use a map-backed fake.
type Metadata interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Float32s(key string) ([]float32, bool)
	Int32s(key string) ([]int32, bool)
	Uint(key string) (uint64, bool)
	Bool(key string) (bool, bool)
}

// Token types as stored in tokenizer.ggml.token_type.
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// attr is a bit set of token attributes (llama.cpp's llama_token_attr).
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrLStrip
	attrRStrip
)

type vocabKind int

const (
	kindSPM vocabKind = iota
	kindBPE
)

// Tokenizer encodes and decodes text for one vocabulary. It is immutable
// after FromGGUF and safe for concurrent use.
type Tokenizer struct {
	model string
	pre   string
	kind  vocabKind

	tokens []string
	scores []float32
	attrs  []attr
	ids    map[string]int32
	pieces [][]byte

	// SPM
	byteTok [256]int32

	// BPE
	ranks        map[string]int32
	regexes      []*regexp2.Regexp
	ignoreMerges bool
	byteEnc      [256]string
	byteDec      map[rune]byte

	bos, eos, unk, eot, eom, sep, pad int32
	addBOS, addEOS, addSpacePrefix    bool
	cleanSpaces                       bool

	eog     map[int32]bool
	special []int32 // control, user-defined and unknown tokens, longest text first
}

const null int32 = -1

const (
	kModel     = "tokenizer.ggml.model"
	kPre       = "tokenizer.ggml.pre"
	kTokens    = "tokenizer.ggml.tokens"
	kScores    = "tokenizer.ggml.scores"
	kTypes     = "tokenizer.ggml.token_type"
	kMerges    = "tokenizer.ggml.merges"
	kAddBOS    = "tokenizer.ggml.add_bos_token"
	kAddEOS    = "tokenizer.ggml.add_eos_token"
	kAddPrefix = "tokenizer.ggml.add_space_prefix"
)

// FromGGUF builds the tokenizer described by the tokenizer.ggml.* keys of md.
// It fails with a clear error for a vocabulary type or pre-tokenizer it does
// not support (WordPiece "bert" among them).
func FromGGUF(md Metadata) (*Tokenizer, error) {
	model, ok := md.String(kModel)
	if !ok {
		return nil, fmt.Errorf("tokenizer: missing %s", kModel)
	}
	t := &Tokenizer{model: model, bos: null, eos: null, unk: null, eot: null, eom: null, sep: null, pad: null}
	pre, _ := md.String(kPre)
	t.pre = pre

	switch model {
	case "llama":
		t.kind = kindSPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix = true
		t.addBOS = true
	case "gpt2":
		t.kind = kindBPE
		t.bos, t.eos = 11, 11
		t.cleanSpaces = true
		exprs, err := t.configurePre(pre)
		if err != nil {
			return nil, err
		}
		for _, e := range exprs {
			re, err := regexp2.Compile(e, regexp2.None)
			if err != nil {
				return nil, fmt.Errorf("tokenizer: pre-tokenizer %q: %w", pre, err)
			}
			t.regexes = append(t.regexes, re)
		}
	case "bert":
		return nil, fmt.Errorf("tokenizer: WordPiece vocabularies (%s = %q) are not supported yet", kModel, model)
	default:
		return nil, fmt.Errorf("tokenizer: unsupported vocabulary type %s = %q", kModel, model)
	}
	if v, ok := md.Bool(kAddPrefix); ok {
		t.addSpacePrefix = v
	}

	toks, ok := md.Strings(kTokens)
	if !ok || len(toks) == 0 {
		return nil, fmt.Errorf("tokenizer: missing %s", kTokens)
	}
	n := len(toks)
	t.tokens = make([]string, n)
	t.scores = make([]float32, n)
	t.attrs = make([]attr, n)
	t.ids = make(map[string]int32, n)
	if s, ok := md.Float32s(kScores); ok {
		if len(s) < n {
			return nil, fmt.Errorf("tokenizer: %s has %d entries for %d tokens", kScores, len(s), n)
		}
		copy(t.scores, s)
	} else if s, ok := md.Int32s(kScores); ok {
		if len(s) < n {
			return nil, fmt.Errorf("tokenizer: %s has %d entries for %d tokens", kScores, len(s), n)
		}
		for i := range t.scores {
			t.scores[i] = float32(s[i])
		}
	}
	types, hasTypes := md.Int32s(kTypes)
	if hasTypes && len(types) < n {
		return nil, fmt.Errorf("tokenizer: %s has %d entries for %d tokens", kTypes, len(types), n)
	}
	for i, w := range toks {
		if w == "" {
			w = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if prev, dup := t.ids[w]; dup {
			return nil, fmt.Errorf("tokenizer: duplicate token %q has ids %d and %d", w, prev, i)
		}
		t.ids[w] = int32(i)
		t.tokens[i] = w
		t.attrs[i] = attrNormal
		if hasTypes {
			switch types[i] {
			case typeNormal:
				t.attrs[i] = attrNormal
			case typeUnknown:
				t.attrs[i] = attrUnknown
			case typeControl:
				t.attrs[i] = attrControl
			case typeUserDefined:
				t.attrs[i] = attrUserDefined
			case typeUnused:
				t.attrs[i] = attrUnused
			case typeByte:
				t.attrs[i] = attrByte
			default:
				t.attrs[i] = 0
			}
		}
	}

	if t.kind == kindBPE {
		merges, ok := md.Strings(kMerges)
		if !ok {
			return nil, fmt.Errorf("tokenizer: missing %s", kMerges)
		}
		t.ranks = make(map[string]int32, len(merges))
		for i, m := range merges {
			key := " "
			if len(m) > 1 {
				if p := strings.IndexByte(m[1:], ' '); p >= 0 {
					key = m
				}
			}
			if _, dup := t.ranks[key]; !dup {
				t.ranks[key] = int32(i)
			}
		}
		t.initByteMaps()
	} else {
		for b := 0; b < 256; b++ {
			id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]
			if !ok {
				id, ok = t.ids[string([]byte{byte(b)})]
			}
			if !ok {
				id = t.unk
			}
			t.byteTok[b] = id
		}
	}

	if err := t.loadSpecial(md); err != nil {
		return nil, err
	}
	t.buildPieces()
	return t, nil
}

// configurePre maps tokenizer.ggml.pre to its regex list and flags, as
// llama.cpp does for BPE vocabularies.
func (t *Tokenizer) configurePre(pre string) ([]string, error) {
	switch pre {
	case "", "default":
		return preDefault, nil
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2":
		t.ignoreMerges = true
		t.addBOS = true
		return preLlama3, nil
	case "dbrx", "smaug-bpe":
		return preLlama3, nil
	case "chatglm-bpe", "glm4":
		t.bos = null
		return preLlama3, nil
	case "deepseek-llm":
		t.cleanSpaces = false
		return preDeepseekLLM, nil
	case "deepseek-coder":
		t.cleanSpaces = false
		return preDeepseekCoder, nil
	case "falcon":
		return preFalcon, nil
	case "mpt", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
		"a.x-4.0", "mellum", "modern-bert", "olmo", "jais", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe":
		return preGPT2, nil
	case "trillion", "granite-docling":
		t.cleanSpaces = false
		return preGPT2, nil
	case "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2":
		return preStarcoder, nil
	case "command-r", "smollm":
		t.cleanSpaces = false
		return preStarcoder, nil
	case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open":
		t.cleanSpaces = false
		return preQwen2, nil
	case "stablelm2", "megrez":
		return preQwen2, nil
	case "gpt-4o", "llama4":
		t.cleanSpaces = false
		return preGPT4o, nil
	}
	return nil, fmt.Errorf("tokenizer: unsupported pre-tokenizer %s = %q", kPre, pre)
}

var eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
	"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}

var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
	"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
	"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
	"<｜end▁of▁sentence｜>", "[e~["}

var (
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
)

// loadSpecial reads special token ids and add-bos/eos flags, and derives the
// end-of-generation set and the special-token cache.
func (t *Tokenizer) loadSpecial(md Metadata) error {
	n := int32(len(t.tokens))
	fimPad, fimRep, fimSep := null, null, null
	ids := []struct {
		key string
		id  *int32
	}{
		{"tokenizer.ggml.bos_token_id", &t.bos},
		{"tokenizer.ggml.eos_token_id", &t.eos},
		{"tokenizer.ggml.eot_token_id", &t.eot},
		{"tokenizer.ggml.eom_token_id", &t.eom},
		{"tokenizer.ggml.unknown_token_id", &t.unk},
		{"tokenizer.ggml.seperator_token_id", &t.sep},
		{"tokenizer.ggml.padding_token_id", &t.pad},
		{"tokenizer.ggml.fim_pad_token_id", &fimPad},
		{"tokenizer.ggml.fim_rep_token_id", &fimRep},
		{"tokenizer.ggml.fim_sep_token_id", &fimSep},
	}
	for _, s := range ids {
		if *s.id >= n {
			*s.id = null
		}
		if v, ok := md.Uint(s.key); ok && v < uint64(n) {
			*s.id = int32(v)
		}
	}
	if v, ok := md.Bool(kAddBOS); ok {
		t.addBOS = v
	}
	if v, ok := md.Bool(kAddEOS); ok {
		t.addEOS = v
	}
	if t.addBOS && t.bos == null {
		return fmt.Errorf("tokenizer: %s is true, but no BOS token is set", kAddBOS)
	}
	if t.addEOS && t.eos == null {
		return fmt.Errorf("tokenizer: %s is true, but no EOS token is set", kAddEOS)
	}

	markControl := func(id int32) { t.attrs[id] |= attrControl }
	find := func(texts []string) int32 {
		for _, s := range texts {
			if id, ok := t.ids[s]; ok {
				return id
			}
		}
		return null
	}
	if t.eot == null {
		if id := find(eotTexts); id != null {
			t.eot = id
			markControl(id)
		}
	}
	if t.eom == null {
		if id, ok := t.ids["<|eom_id|>"]; ok {
			t.eom = id
			markControl(id)
		}
	}
	if fimPad == null {
		fimPad = find(fimPadTexts)
	}
	if fimRep == null {
		fimRep = find(fimRepTexts)
	}
	if fimSep == null {
		fimSep = find(fimSepTexts)
	}
	t.eog = make(map[int32]bool)
	for _, id := range []int32{fimPad, fimRep, fimSep} {
		if id != null {
			markControl(id)
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			markControl(id)
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != null {
			t.eog[id] = true
		}
	}

	for id := int32(0); id < n; id++ {
		if t.attrs[id]&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, id)
		}
	}
	sort.SliceStable(t.special, func(i, j int) bool {
		return len(t.tokens[t.special[i]]) > len(t.tokens[t.special[j]])
	})

	// Per-model attributes llama.cpp sets by name.
	if name, ok := md.String("general.name"); ok {
		name = strings.ToLower(name)
		if strings.Contains(name, "phi-3") || strings.Contains(name, "phi3") {
			for _, id := range t.special {
				t.attrs[id] |= attrRStrip
			}
			if id, ok := t.ids["</s>"]; ok {
				t.attrs[id] |= attrRStrip
			}
			for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
				if id, ok := t.ids[s]; ok {
					t.attrs[id] &^= attrRStrip
				}
			}
		}
	}
	return nil
}

// buildPieces precomputes Piece for every token.
func (t *Tokenizer) buildPieces() {
	t.pieces = make([][]byte, len(t.tokens))
	for i, text := range t.tokens {
		a := t.attrs[i]
		switch {
		case a&(attrUnknown|attrControl) != 0:
			t.pieces[i] = nil
		case a&attrUserDefined != 0:
			t.pieces[i] = []byte(text)
		case a&attrNormal != 0:
			if t.kind == kindSPM {
				t.pieces[i] = []byte(strings.ReplaceAll(text, spaceMarker, " "))
			} else {
				t.pieces[i] = t.decodeByteLevel(text)
			}
		case a&attrByte != 0:
			if b, ok := parseByteToken(text); ok {
				t.pieces[i] = []byte{b}
			}
		}
	}
}

// parseByteToken reads a <0xNN> token text.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Model returns tokenizer.ggml.model ("llama" or "gpt2").
func (t *Tokenizer) Model() string { return t.model }

// Pre returns tokenizer.ggml.pre as stored in the metadata (may be empty).
func (t *Tokenizer) Pre() string { return t.pre }

// VocabSize returns the number of tokens in the vocabulary.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token id, or -1 when there is none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token id, or -1 when there is none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// IsEOG reports whether id ends generation (EOS, EOT, EOM and the tokens
// llama.cpp recognises by their text, such as <|im_end|> or <|eot_id|>).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// IsControl reports whether id is a control token (its Piece is empty).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&attrControl != 0
}

// Token returns the stored text of token id, or "" when id is out of range.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// ID returns the id of the token whose stored text is exactly s.
func (t *Tokenizer) ID(s string) (int32, bool) {
	id, ok := t.ids[s]
	return id, ok
}

// Piece returns the raw bytes token id contributes to output text: byte-level
// BPE characters mapped back to bytes, ▁ turned into a space, <0xNN> into its
// byte, control and unknown tokens into nothing. The slice must not be
// modified. A piece may hold part of a UTF-8 sequence; see StreamDecoder.
func (t *Tokenizer) Piece(id int32) []byte {
	if id < 0 || int(id) >= len(t.pieces) {
		return nil
	}
	return t.pieces[id]
}

// Decode concatenates the pieces of ids, as llama.cpp's examples print them
// token by token (an SPM prompt therefore keeps its leading space). Invalid
// UTF-8 is kept as is.
func (t *Tokenizer) Decode(ids []int32) string {
	n := 0
	for _, id := range ids {
		n += len(t.Piece(id))
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		b.Write(t.Piece(id))
	}
	return b.String()
}

// Detokenize mirrors llama.cpp's llama_detokenize: with removeSpecial a
// leading BOS and trailing EOS are dropped (when the model adds them);
// unparseSpecial renders control tokens as their text; the leading space SPM
// adds is removed; and vocabularies that ask for it get llama.cpp's
// clean-up of spaces before punctuation and contractions.
func (t *Tokenizer) Detokenize(ids []int32, removeSpecial, unparseSpecial bool) string {
	removeSpace := t.addSpacePrefix
	if removeSpecial && t.addBOS && len(ids) > 0 && ids[0] == t.bos {
		removeSpace = false
		ids = ids[1:]
	}
	if removeSpecial && t.addEOS && len(ids) > 0 && ids[len(ids)-1] == t.eos {
		ids = ids[:len(ids)-1]
	}
	var out []byte
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			removeSpace = false
			continue
		}
		p := t.pieces[id]
		if unparseSpecial && t.attrs[id]&(attrUnknown|attrControl) != 0 {
			p = []byte(t.tokens[id])
		}
		if removeSpace && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		removeSpace = false
		out = append(out, p...)
	}
	if t.cleanSpaces {
		out = cleanSpaces(out)
	}
	return string(out)
}

// cleanSpaces applies llama.cpp's three clean-up passes.
func cleanSpaces(text []byte) []byte {
	// " ?", " !", " .", " ,"
	n := len(text)
	total := 0
	if n > 0 {
		total = 1
	}
	for i := 1; i < n; i++ {
		x := text[i]
		if text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			total--
		}
		text[total] = x
		total++
	}
	// " ' "
	n = total
	total = 0
	if n > 0 {
		total = 1
	}
	for i := 1; i < n; i++ {
		x := text[i]
		if x == '\'' && i+1 < n && text[i-1] == ' ' && text[i+1] == ' ' {
			total--
			i++
			text[i] = 0
		}
		text[total] = x
		total++
	}
	// " 's", " 'm", " 're", " 've"
	n = total
	total = 0
	if n > 0 {
		total = 1
	}
	for i := 1; i < n; i++ {
		x := text[i]
		if text[i-1] == ' ' && x == '\'' && i+1 < n {
			x1 := text[i+1]
			if x1 == 's' || x1 == 'm' {
				total--
			} else if x1 != 't' && x1 != 'd' && i+2 < n {
				x2 := text[i+2]
				if (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e') {
					total--
				}
			}
		}
		text[total] = x
		total++
	}
	return text[:total]
}

// fragment is a piece of input: raw text (tok == null) or a special token.
type fragment struct {
	text string
	tok  int32
}

// Encode tokenizes text. addSpecial adds BOS/EOS as the metadata asks;
// parseSpecial lets the text of control tokens (e.g. "<s>", "<|im_end|>")
// stand for those tokens. User-defined tokens are always recognised, as in
// llama.cpp.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	frags := t.partition(text, parseSpecial)
	out := make([]int32, 0, len(text)/3+4)
	if addSpecial && t.addBOS && t.bos != null {
		out = append(out, t.bos)
	}
	switch t.kind {
	case kindSPM:
		prevSpecial := true
		var buf []byte
		for _, f := range frags {
			if f.tok != null {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			buf = buf[:0]
			if t.addSpacePrefix && prevSpecial {
				buf = append(buf, spaceMarker...)
			}
			buf = appendEscaped(buf, f.text)
			out = t.encodeSPM(string(buf), out)
			prevSpecial = false
		}
	case kindBPE:
		for _, f := range frags {
			if f.tok != null {
				out = append(out, f.tok)
				continue
			}
			out = t.encodeBPE(f.text, out)
		}
	}
	if addSpecial && t.addEOS && t.eos != null {
		out = append(out, t.eos)
	}
	return out
}

// spaceMarker is SentencePiece's escaped space, U+2581.
const spaceMarker = "\u2581"

func appendEscaped(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			buf = append(buf, spaceMarker...)
		} else {
			buf = append(buf, s[i])
		}
	}
	return buf
}

func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// partition splits text around special tokens, longest token text first, as
// llama.cpp's tokenizer_st_partition does.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{text: text, tok: null}}
	for _, id := range t.special {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tt := t.tokens[id]
		var next []fragment
		for i, f := range frags {
			if f.tok != null || !strings.Contains(f.text, tt) {
				if next != nil {
					next = append(next, f)
				}
				continue
			}
			if next == nil {
				next = append(make([]fragment, 0, len(frags)+4), frags[:i]...)
			}
			rest := f.text
			for {
				k := strings.Index(rest, tt)
				if k < 0 {
					if rest != "" {
						next = append(next, fragment{text: rest, tok: null})
					}
					break
				}
				left := rest[:k]
				if a&attrLStrip != 0 {
					for len(left) > 0 && isCSpace(left[len(left)-1]) {
						left = left[:len(left)-1]
					}
				}
				if left != "" {
					next = append(next, fragment{text: left, tok: null})
				}
				next = append(next, fragment{tok: id})
				rest = rest[k+len(tt):]
				if a&attrRStrip != 0 {
					for len(rest) > 0 && isCSpace(rest[0]) {
						rest = rest[1:]
					}
				}
			}
		}
		if next != nil {
			frags = next
		}
	}
	return frags
}

// utf8Len is llama.cpp's unicode_len_utf8: the sequence length implied by a
// lead byte (continuation bytes count as 1).
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}
