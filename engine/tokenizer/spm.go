package tokenizer

// spmSymbol is a run of bytes of the input in a doubly linked list.
type spmSymbol struct {
	prev, next int32
	start, n   int32
}

// spmBigram is a candidate merge of two adjacent symbols.
type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

// spmHeap is a max-heap by score; ties go to the leftmost pair.
type spmHeap []spmBigram

func (h spmHeap) less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	return h[i].left < h[j].left
}

func (h *spmHeap) push(b spmBigram) {
	*h = append(*h, b)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *spmHeap) pop() spmBigram {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
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
	h := make(spmHeap, 0, len(syms))
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
		h.push(spmBigram{left: left, right: right, score: t.scores[id], size: int32(len(s))})
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
