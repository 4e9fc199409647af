package tokenizer

// bigram is a candidate merge of two adjacent symbols (SentencePiece: priority is the
// merged token's score; BPE: the negated merge rank).
type bigram struct {
	left, right int32
	priority    float64
	size        int32
}

// bigramHeap is a max-heap of candidate merges by priority; ties go to the leftmost pair,
// as in llama.cpp's tokenizers.
type bigramHeap []bigram

func (h bigramHeap) less(i, j int) bool {
	if h[i].priority != h[j].priority {
		return h[i].priority > h[j].priority
	}
	return h[i].left < h[j].left
}

func (h *bigramHeap) push(b bigram) {
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

func (h *bigramHeap) pop() bigram {
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
