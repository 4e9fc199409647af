package server

import "strings"

// stopper cuts generated text at the first stop string. While streaming it holds back
// the tail of the text that could still grow into a stop string, so that no part of a
// stop string is ever sent, even when it is split across tokens.
type stopper struct {
	stops []string
	held  string
	hit   bool
}

// push adds newly generated text and returns the text that is safe to send. Once a stop
// string is found, hit is true and the text before it is returned; later pushes return "".
func (s *stopper) push(text string) (out string, hit bool) {
	if s.hit {
		return "", true
	}
	if len(s.stops) == 0 {
		return text, false
	}
	buf := s.held + text
	cut := -1
	for _, st := range s.stops {
		if i := strings.Index(buf, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	if cut >= 0 {
		s.held, s.hit = "", true
		return buf[:cut], true
	}
	k := 0 // the longest suffix of buf that is a proper prefix of a stop string
	for _, st := range s.stops {
		for n := min(len(st)-1, len(buf)); n > k; n-- {
			if strings.HasSuffix(buf, st[:n]) {
				k = n
				break
			}
		}
	}
	s.held = buf[len(buf)-k:]
	return buf[:len(buf)-k], false
}

// flush returns the held-back text at the end of a generation that hit no stop string.
func (s *stopper) flush() string {
	out := s.held
	s.held = ""
	return out
}
