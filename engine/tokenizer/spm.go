package tokenizer

// spmSymbol is a run of bytes of the input in a doubly linked list.
type spmSymbol struct {
	prev, next int32
	start, n   int32
}

// encodeSPM is SentencePiece-BPE over already escaped text: start from UTF-8
// characters, repeatedly merge the adjacent pair whose concatenation is the
// vocabulary token with the highest score, then emit each symbol's token or,
// failing that, its bytes as <0xNN> tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	syms := make([]spmSymbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		idx := int32(len(syms))
		next := idx + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, spmSymbol{prev: idx - 1, next: next, start: int32(off), n: int32(n)})
		off += n
	}
	h := make(bigramHeap, 0, len(syms))
	try := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		l := syms[left]
		s := text[l.start : l.start+l.n+syms[right].n]
		id, ok := t.ids[s]
		if !ok {
			return
		}
		h.push(bigram{left: left, right: right, priority: float64(t.scores[id]), size: int32(len(s))})
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
	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			if id := t.byteTok[piece[j]]; id != null {
				out = append(out, id)
			}
		}
	}
	return out
}
