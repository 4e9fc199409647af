package synth

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Token types as llama.cpp's enum llama_token_type (tokenizer.ggml.token_type).
const (
	tokNormal      int32 = 1
	tokUnknown     int32 = 2
	tokControl     int32 = 3
	tokUserDefined int32 = 4
	tokUnused      int32 = 5
	tokByte        int32 = 6
)

// vocab is a generated tokenizer, ready to be written as tokenizer.ggml.* keys.
type vocab struct {
	model  string // tokenizer.ggml.model
	pre    string // tokenizer.ggml.pre
	tokens []string
	scores []float32 // SPM only
	types  []int32
	merges []string // BPE only
	bos    uint32
	eos    uint32
	unk    int64 // -1 when absent
	pad    int64 // -1 when absent
	addBOS bool
}

// minVocab is the smallest vocabulary a tokenizer family can be built with.
func minVocab(k VocabKind) int {
	switch k {
	case VocabLlama3:
		return 256 + 256 + 64
	case VocabQwen2:
		return 256 + 3 + 64
	}
	return 3 + 256 + 64
}

// commonWords seeds the vocabularies with real English so that tokenized prose is made
// of word-sized tokens, as with a trained tokenizer.
const commonWords = `the of and to in a is that for it as was with be by on not he i this are or his
from at which but have an they you were her she there one all we their has been had if more when
will would who so no out up into do can some time them other than then its only new about over
could also may first these like after two made any people our what man most years way many even
me my him said each well very how where should much through good great before back just little
must see day because use long between three own know under come being life work year same down
world still while state last here might never again take part get off old place around another
thing used every both think house against right without found high during few small end school
system number give need help child water point home mother father family name story once upon
time little girl boy dog cat tree sun moon happy sad play friend big red blue green run ran
walk look looked saw went go going said say tell told want wanted love loved find found make
made eat ate sleep slept morning night day today tomorrow yesterday always sometimes never
away happy very much small large long short hot cold new old young good bad nice kind mean
open close door window room table chair bed book paper pen letter word sentence language
model token text data value function method result test error file path read write load
store cache memory compute process thread queue batch request response server client user
number string array list map set key type class object field param return true false null
question answer reason problem solution example idea fact case group area country city
street road car bus train plane ship boat fish bird horse cow pig sheep chicken flower grass
garden park river lake sea ocean mountain hill forest desert island beach sky cloud rain snow
wind storm light dark color colour sound music song dance game toy ball box bag hat shoe
shirt dress coat food bread milk cake apple orange banana juice tea coffee sugar salt
because though although however therefore whether either neither both each every any
above below behind beside between beyond inside outside through toward towards upon within
slowly quickly suddenly finally really almost already always often usually together
anything everything something nothing someone everyone anyone nobody somewhere everywhere
began begin begun became become brought bring built build bought buy caught catch chose
choose felt feel fought fight gave given knew known learned learn left leave lost lose
meant mean met meet paid pay put quit read rode ride rose rise sang sing sat sit sold sell
sent send showed show shut spoke speak spent spend stood stand swam swim taught teach
thought threw throw understood understand woke wake wore wear won win wrote written`

// syllable parts for the pseudo-words that fill the rest of a vocabulary.
var (
	onsets = []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "st", "th", "ch", "sh", "br", "tr", "pl", "gr"}
	nuclei = []string{"a", "e", "i", "o", "u", "ai", "ou", "ee"}
	codas  = []string{"", "n", "r", "s", "t", "l", "m", "nd", "ck"}
)

// pseudoWord returns the i-th pseudo-word: syllables counted in a mixed radix, so every
// i gives a distinct word and small i give short words.
func pseudoWord(i int) string {
	per := len(onsets) * len(nuclei) * len(codas)
	var b strings.Builder
	for {
		s := i % per
		b.WriteString(onsets[s%len(onsets)])
		s /= len(onsets)
		b.WriteString(nuclei[s%len(nuclei)])
		s /= len(nuclei)
		b.WriteString(codas[s])
		i /= per
		if i == 0 {
			return b.String()
		}
		i--
	}
}

// wordStream yields candidate words forever: the common words first (lower-case, then
// capitalized), then pseudo-words.
func wordStream(yield func(string) bool) {
	words := strings.Fields(commonWords)
	for _, w := range words {
		if !yield(w) {
			return
		}
	}
	for _, w := range words {
		if !yield(strings.ToUpper(w[:1]) + w[1:]) {
			return
		}
	}
	for i := 0; ; i++ {
		if !yield(pseudoWord(i)) {
			return
		}
	}
}

const spmSpace = "\u2581" // ▁, SentencePiece's visible space

// buildSPM builds a SentencePiece vocabulary of n tokens in llama's layout: <unk>, <s>,
// </s>, the 256 byte tokens <0x00>…<0xFF>, then pieces with decreasing scores. Pieces
// are prefix-closed (every prefix of length ≥ 2 of a piece is a piece), so llama.cpp's
// bigram-merging SPM tokenizer can always reach whole words; single letters, digits and
// punctuation are pieces too, and anything else falls back to bytes.
func buildSPM(n int) *vocab {
	v := &vocab{model: "llama", pre: "default", bos: 1, eos: 2, unk: 0, pad: -1, addBOS: true}
	add := func(tok string, score float32, typ int32) {
		v.tokens = append(v.tokens, tok)
		v.scores = append(v.scores, score)
		v.types = append(v.types, typ)
	}
	add("<unk>", 0, tokUnknown)
	add("<s>", 0, tokControl)
	add("</s>", 0, tokControl)
	for b := range 256 {
		add(fmt.Sprintf("<0x%02X>", b), 0, tokByte)
	}
	seen := make(map[string]bool, n)
	piece := func(p string) bool {
		if len(v.tokens) >= n {
			return false
		}
		if !seen[p] {
			seen[p] = true
			add(p, -float32(len(v.tokens)-259), tokNormal)
		}
		return len(v.tokens) < n
	}
	// Prefixes of a piece, shortest first ("▁t", "▁th", "▁the").
	chain := func(w string) bool {
		for i, r := range w {
			end := i + utf8.RuneLen(r)
			if utf8.RuneCountInString(w[:end]) < 2 {
				continue
			}
			if !piece(w[:end]) {
				return false
			}
		}
		return true
	}
	if !piece(spmSpace) {
		return v
	}
	for _, r := range "etaoinshrdlucmfwypvbgkjqxzETAOINSHRDLUCMFWYPVBGKJQXZ0123456789.,!?'\"-:;()[]{}/\\@#$%&*+=<>_|~`^" {
		if !piece(string(r)) {
			return v
		}
	}
	for w := range wordStream {
		if !chain(spmSpace+w) || !chain(w) {
			break
		}
	}
	return v
}

// gpt2ByteChars returns GPT-2's bytes_to_unicode table: the printable character that
// stands for each byte in a byte-level BPE vocabulary (space is "Ġ", newline "Ċ").
func gpt2ByteChars() [256]string {
	var out [256]string
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// buildBPE builds a byte-level BPE vocabulary of n tokens: the 256 byte characters, then
// regular tokens each made by a merge of two existing tokens (merges listed in rank
// order, each after the tokens it joins), then the family's special tokens. The merges
// are made by running BPE on English words (then pseudo-words) and joining what is left,
// so every word listed becomes a single token, with or without a leading space ("Ġ").
func buildBPE(kind VocabKind, n int) *vocab {
	var v *vocab
	var specials []string
	var nRegular int
	switch kind {
	case VocabLlama3:
		// Llama 3: 128000 regular tokens, then 256 special ones starting at
		// <|begin_of_text|> (128000) and <|end_of_text|> (128001).
		nRegular = n - 256
		v = &vocab{model: "gpt2", pre: "llama-bpe", bos: uint32(nRegular), eos: uint32(nRegular + 1), unk: -1, pad: -1, addBOS: true}
		specials = llama3Specials()
	default:
		// Qwen2: regular tokens up to 151643, then <|endoftext|>, <|im_start|>,
		// <|im_end|>, and [PADn] fillers up to the padded vocabulary size.
		nRegular = min(151643, n-3)
		v = &vocab{model: "gpt2", pre: "qwen2", bos: uint32(nRegular), eos: uint32(nRegular), unk: -1, pad: int64(nRegular), addBOS: false}
		specials = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
	}
	bc := gpt2ByteChars()
	seen := make(map[string]bool, n)
	for _, c := range bc {
		v.tokens = append(v.tokens, c)
		v.types = append(v.types, tokNormal)
		seen[c] = true
	}
	full := func() bool { return len(v.tokens) >= nRegular }
	rank := map[string]int{} // "a b" → merge rank
	var syms []string
	// bpe splits w into characters and applies the merges so far, lowest rank first,
	// exactly as a BPE tokenizer would.
	bpe := func(w string) []string {
		syms = syms[:0]
		for _, r := range w {
			syms = append(syms, string(r))
		}
		for len(syms) > 1 {
			best, bi := -1, -1
			for i := 0; i+1 < len(syms); i++ {
				if r, ok := rank[syms[i]+" "+syms[i+1]]; ok && (best < 0 || r < best) {
					best, bi = r, i
				}
			}
			if bi < 0 {
				break
			}
			syms[bi] += syms[bi+1]
			syms = append(syms[:bi+1], syms[bi+2:]...)
		}
		return syms
	}
	// word adds merges until BPE turns w into a single token: each new merge joins the
	// first two symbols BPE leaves, and has the highest rank so far, so the words added
	// before keep tokenizing to one token.
	word := func(w string) bool {
		for {
			ss := bpe(w)
			if len(ss) < 2 {
				return !full()
			}
			tok := ss[0] + ss[1]
			if !seen[tok] {
				if full() {
					return false
				}
				seen[tok] = true
				v.tokens = append(v.tokens, tok)
				v.types = append(v.types, tokNormal)
			}
			m := ss[0] + " " + ss[1]
			rank[m] = len(v.merges)
			v.merges = append(v.merges, m)
		}
	}
	space := bc[' ']
	for w := range wordStream {
		if !word(space+w) || !word(w) {
			break
		}
	}
	for _, s := range specials {
		if len(v.tokens) >= n {
			break
		}
		v.tokens = append(v.tokens, s)
		v.types = append(v.types, tokControl)
	}
	for len(v.tokens) < n {
		v.tokens = append(v.tokens, fmt.Sprintf("[PAD%d]", len(v.tokens)))
		v.types = append(v.types, tokUnused)
	}
	return v
}

// llama3Specials returns Llama 3's 256 special tokens in id order from 128000.
func llama3Specials() []string {
	out := make([]string, 0, 256)
	out = append(out, "<|begin_of_text|>", "<|end_of_text|>",
		"<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
		"<|reserved_special_token_2|>", "<|reserved_special_token_3|>",
		"<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>")
	for i := 5; len(out) < 256; i++ {
		out = append(out, fmt.Sprintf("<|reserved_special_token_%d|>", i))
	}
	return out
}

// buildVocab builds the tokenizer of a shape.
func buildVocab(s Shape) *vocab {
	switch s.Tok {
	case VocabLlama3, VocabQwen2:
		return buildBPE(s.Tok, s.Vocab)
	}
	return buildSPM(s.Vocab)
}

// addKVs writes the tokenizer.ggml.* keys.
func (v *vocab) addKVs(add func(string, any)) {
	add("tokenizer.ggml.model", v.model)
	add("tokenizer.ggml.pre", v.pre)
	add("tokenizer.ggml.tokens", v.tokens)
	if v.scores != nil {
		add("tokenizer.ggml.scores", v.scores)
	}
	add("tokenizer.ggml.token_type", v.types)
	if v.merges != nil {
		add("tokenizer.ggml.merges", v.merges)
	}
	add("tokenizer.ggml.bos_token_id", v.bos)
	add("tokenizer.ggml.eos_token_id", v.eos)
	if v.unk >= 0 {
		add("tokenizer.ggml.unknown_token_id", uint32(v.unk))
	}
	if v.pad >= 0 {
		add("tokenizer.ggml.padding_token_id", uint32(v.pad))
	}
	add("tokenizer.ggml.add_bos_token", v.addBOS)
	add("tokenizer.ggml.add_eos_token", false)
}
