package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// initByteMaps builds GPT-2's reversible byte ↔ printable-character mapping:
// printable Latin-1 bytes map to themselves, the rest to U+0100 onwards.
func (t *Tokenizer) initByteMaps() {
	t.byteDec = make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) {
			r = rune(256 + n)
			n++
		}
		t.byteEnc[b] = string(r)
		t.byteDec[r] = byte(b)
	}
}

// decodeByteLevel maps a byte-level BPE token text back to raw bytes, with
// llama.cpp's marker for characters outside the mapping.
func (t *Tokenizer) decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for _, r := range decodeRunes(text) {
		if b, ok := t.byteDec[r]; ok {
			out = append(out, b)
			continue
		}
		out = append(out, "[UNK_BYTE_0x"...)
		for _, c := range appendRune(nil, r) {
			out = append(out, fmt.Sprintf("%02x", c)...)
		}
		out = append(out, text...)
		out = append(out, ']')
	}
	return out
}

// decodeRunes decodes UTF-8 the way llama.cpp's unicode_cpts_from_utf8 does:
// structurally valid sequences are accepted as they are (surrogates and
// overlong forms included) and every other byte becomes U+FFFD.
func decodeRunes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
		switch {
		case c < 0x80:
			out = append(out, rune(c))
			i++
		case c&0x40 == 0:
			out = append(out, utf8.RuneError)
			i++
		case c&0x20 == 0:
			if !cont(1) {
				out = append(out, utf8.RuneError)
				i++
				continue
			}
			out = append(out, rune(c&0x1F)<<6|rune(s[i+1]&0x3F))
			i += 2
		case c&0x10 == 0:
			if !cont(1) || !cont(2) {
				out = append(out, utf8.RuneError)
				i++
				continue
			}
			out = append(out, rune(c&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F))
			i += 3
		case c&0x08 == 0:
			if !cont(1) || !cont(2) || !cont(3) {
				out = append(out, utf8.RuneError)
				i++
				continue
			}
			out = append(out, rune(c&0x07)<<18|rune(s[i+1]&0x3F)<<12|rune(s[i+2]&0x3F)<<6|rune(s[i+3]&0x3F))
			i += 4
		default:
			out = append(out, utf8.RuneError)
			i++
		}
	}
	return out
}

// appendRune encodes r as llama.cpp's unicode_cpt_to_utf8 does (surrogates
// are written as three bytes rather than replaced).
func appendRune(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6&0x1F), 0x80|byte(r&0x3F))
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12&0x0F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	default:
		return append(b, 0xF0|byte(r>>18&0x07), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
}

// bpeSymbol is a run of bytes of one word in a doubly linked list.
type bpeSymbol struct {
	prev, next int32
	start, n   int32
}

// encodeBPE pre-tokenizes text into words, byte-encodes each and applies the
// merges in rank order.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	words := t.pretokenize(text)
	var (
		syms []bpeSymbol
		h    bigramHeap
		key  []byte
	)
	for _, word := range words {
		if t.ignoreMerges {
			if id, ok := t.ids[word]; ok {
				out = append(out, id)
				continue
			}
		}
		syms = syms[:0]
		for off := 0; off < len(word); {
			n := min(utf8Len(word[off]), len(word)-off)
			idx := int32(len(syms))
			next := idx + 1
			if off+n == len(word) {
				next = -1
			}
			syms = append(syms, bpeSymbol{prev: idx - 1, next: next, start: int32(off), n: int32(n)})
			off += n
		}
		h = h[:0]
		try := func(left, right int32) {
			if left < 0 || right < 0 {
				return
			}
			l, r := syms[left], syms[right]
			key = append(key[:0], word[l.start:l.start+l.n]...)
			key = append(key, ' ')
			key = append(key, word[r.start:r.start+r.n]...)
			rank, ok := t.ranks[string(key)]
			if !ok {
				return
			}
			h.push(bigram{left: left, right: right, priority: -float64(rank), size: l.n + r.n}) // lower rank first
		}
		for i := 1; i < len(syms); i++ {
			try(int32(i-1), int32(i))
		}
		for len(h) > 0 {
			b := h.pop()
			l, r := &syms[b.left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
				continue
			}
			l.n += r.n
			r.n = 0
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = b.left
			}
			try(l.prev, b.left)
			try(b.left, l.next)
		}
		for i := int32(0); i != -1 && len(syms) > 0; i = syms[i].next {
			s := syms[i]
			piece := word[s.start : s.start+s.n]
			if id, ok := t.ids[piece]; ok {
				out = append(out, id)
				continue
			}
			// llama.cpp looks each byte of the unknown symbol up as a
			// one-byte token and drops those that are absent.
			for j := 0; j < len(piece); j++ {
				if id, ok := t.ids[piece[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}

// pretokenize splits text with the vocabulary's regex list (each regex splits
// every piece left by the previous one; text between matches is kept as its
// own piece) and byte-encodes the pieces.
func (t *Tokenizer) pretokenize(text string) []string {
	runes := decodeRunes(text)
	segs := []span{{0, len(runes)}}
	var next []span
	for _, re := range t.regexes {
		next = next[:0]
		for _, sg := range segs {
			next = splitRegex(re, runes, sg, next)
		}
		segs, next = next, segs
	}
	words := make([]string, 0, len(segs))
	var raw, enc []byte
	for _, sg := range segs {
		raw = raw[:0]
		for _, r := range runes[sg.lo:sg.hi] {
			raw = appendRune(raw, r)
		}
		enc = enc[:0]
		for _, c := range raw {
			enc = append(enc, t.byteEnc[c]...)
		}
		words = append(words, string(enc))
	}
	return words
}
