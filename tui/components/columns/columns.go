// Package columns fits a report's text to a screen's width: its tables (llama-bench's
// markdown table, the sweep table, a kernel suite's grid and " | " tables) can be wider than
// the screen. Rather than cut them at the right edge (or scroll the key column away),
// Fit shows whole columns: the key ones (what a row is, and its headline figure)
// always, then as many of the others as fit from the first one not scrolled past
// (skip), in the report's order. Lines that are not part of a table are wrapped where
// they do not fit, never cut; a title box (╔═╗ ║ ║ ╚═╝) is narrowed to the width.
package columns

import (
	"strings"
	"unicode/utf8"

	"llmbench/tui/components/panel"
)

// keyHeaders names the columns kept in view: the llama-bench table's test and t/s,
// the sweep table's point (power, concurrency) and output throughput, the
// paged-attention table's speedup (its case is its first column), JetStream's dtype
// and throughput.
var keyHeaders = map[string]bool{"test": true, "t/s": true, "power": true, "concurrency": true, "out tok/s": true, "speedup": true,
	"dtype": true, "throughput (token/s)": true}

// block is a run of lines of one table, split into column spans (rune offsets).
type block struct {
	lines  [][]rune
	starts []int // where each column starts; a column ends where the next starts
	tail   int   // markdown: the closing '|' (kept after the last column shown); -1 otherwise
	keys   []bool
}

// isRule reports whether l is a title or rule line of a report (====, ----, a
// centred title between them): not a table row.
func isRule(l string) bool {
	t := strings.Trim(l, " =-")
	return t == "" || strings.HasPrefix(strings.TrimSpace(l), "=")
}

// tableLine reports whether l is a line of a markdown or grid table: a row ("| a |")
// or a grid rule ("+----+", "+====+").
func tableLine(l string) bool {
	return strings.HasPrefix(l, "|") || strings.HasPrefix(l, "+-") || strings.HasPrefix(l, "+=")
}

// pipeLine reports whether l is a line of a " | "-separated table (the
// paged-attention suite's case table): not a markdown row, cells joined by " | ".
func pipeLine(l string) bool { return !strings.HasPrefix(l, "|") && strings.Contains(l, " | ") }

// blockEnd returns the end of the run of lines from i that in reports true for.
func blockEnd(lines []string, i int, in func(string) bool) int {
	for i < len(lines) && in(lines[i]) {
		i++
	}
	return i
}

// wider reports whether a line of ls is wider than w.
func wider(ls []string, w int) bool {
	for _, l := range ls {
		if panel.Width(l) > w {
			return true
		}
	}
	return false
}

// aligned reports whether ls can be a space-aligned table: two lines or more, one of
// them with a gap of two blanks or more after its indent (prose has single blanks).
func aligned(ls []string) bool {
	if len(ls) < 2 {
		return false
	}
	for _, l := range ls {
		if strings.Contains(strings.TrimLeft(l, " "), "  ") {
			return true
		}
	}
	return false
}

// narrowBox returns a line of a title box (╔═╗, ║ title ║, ╚═╝) in w cells: the
// rule shortened, the title centred (cut only when it is wider than the screen);
// ok is false for other lines.
func narrowBox(l string, w int) (string, bool) {
	r := []rune(l)
	if len(r) < 2 || w < 2 {
		return "", false
	}
	first, last := r[0], r[len(r)-1]
	switch {
	case (first == '╔' && last == '╗') || (first == '╚' && last == '╝'):
		return string(first) + strings.Repeat("═", w-2) + string(last), true
	case first == '║' && last == '║':
		title := strings.TrimSpace(string(r[1 : len(r)-1]))
		if n := utf8.RuneCountInString(title); n > w-2 {
			title = panel.Fit(title, w-2)
		}
		pad := w - 2 - panel.Width(title)
		return "║" + strings.Repeat(" ", pad/2) + title + strings.Repeat(" ", pad-pad/2) + "║", true
	}
	return "", false
}

// Fit returns text's lines fitted to w cells, with skip non-key columns of every
// too-wide table scrolled past, and whether columns remain hidden to the right.
func Fit(text string, w, skip int) (out []string, more bool) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		l := lines[i]
		if b, ok := narrowBox(l, w); ok && panel.Width(l) > w {
			out = append(out, b)
			i++
			continue
		}
		switch {
		case pipeLine(l) && wider(lines[i:blockEnd(lines, i, pipeLine)], w):
			j := blockEnd(lines, i, pipeLine)
			o, mo := pipeBlock(lines[i:j]).fit(w, skip)
			out, more = append(out, o...), more || mo
			i = j
		case tableLine(l):
			j := i
			for j < len(lines) && tableLine(lines[j]) {
				j++
			}
			o, mo := markdownBlock(lines[i:j]).fit(w, skip)
			out, more = append(out, o...), more || mo
			i = j
		case panel.Width(l) > w && !isRule(l):
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && !isRule(lines[j]) && !tableLine(lines[j]) {
				j++
			}
			if !aligned(lines[i:j]) { // prose, not a table: wrapped
				for _, p := range lines[i:j] {
					out = append(out, wrapLine(p, w)...)
				}
				i = j
				continue
			}
			o, mo := gutterBlock(lines[i:j]).fit(w, skip)
			out, more = append(out, o...), more || mo
			i = j
		default:
			out = append(out, wrapLine(l, w)...)
			i++
		}
	}
	return out, more
}

// wrapLine breaks l into pieces of at most w cells (a wide rune such as an emoji
// takes two), at the last blank that fits where there is one.
func wrapLine(l string, w int) []string {
	if panel.Width(l) <= w || w <= 0 {
		return []string{l}
	}
	var out []string
	r := []rune(l)
	for panel.Width(string(r)) > w {
		n, cells, blank := 0, 0, -1
		for n < len(r) {
			c := panel.Width(string(r[n]))
			if cells+c > w {
				break
			}
			if r[n] == ' ' {
				blank = n
			}
			cells += c
			n++
		}
		if n == 0 { // a rune wider than the screen
			n = 1
		}
		cut, next := n, n
		switch {
		case n < len(r) && r[n] == ' ': // the break falls on a blank
			next = n + 1
		case blank > 0:
			cut, next = blank, blank+1
		}
		out = append(out, string(r[:cut]))
		r = r[next:]
	}
	return append(out, string(r))
}

func runes(ls []string) [][]rune {
	out := make([][]rune, len(ls))
	for i, l := range ls {
		out[i] = []rune(l)
	}
	return out
}

// markdownBlock splits a markdown table at the first line's '|' (a grid table at its
// first rule's '+', where its rows have their '|'); the header is its first row.
func markdownBlock(ls []string) block {
	b := block{lines: runes(ls), tail: -1}
	for i, c := range b.lines[0] {
		if c == '|' || c == '+' {
			b.starts = append(b.starts, i)
		}
	}
	if n := len(b.starts); n > 1 {
		b.tail, b.starts = b.starts[n-1], b.starts[:n-1]
	}
	h := b.lines[0]
	for _, l := range b.lines {
		if len(l) > 0 && l[0] == '|' {
			h = l
			break
		}
	}
	b.setKeys(h)
	return b
}

// pipeBlock splits a " | "-separated table at its first line's '|' (the first column
// from the line's start).
func pipeBlock(ls []string) block {
	b := block{lines: runes(ls), tail: -1, starts: []int{0}}
	for i, c := range b.lines[0] {
		if c == '|' {
			b.starts = append(b.starts, i)
		}
	}
	b.setKeys(b.lines[0])
	b.keys[0] = true // what a row is, kept in view beside a key figure
	return b
}

// gutterBlock splits a space-aligned table where every line has a blank.
func gutterBlock(ls []string) block {
	b := block{lines: runes(ls), tail: -1}
	width := 0
	for _, l := range b.lines {
		width = max(width, len(l))
	}
	blank := func(i int) bool {
		for _, l := range b.lines {
			if i < len(l) && l[i] != ' ' {
				return false
			}
		}
		return true
	}
	for i := range width {
		if !blank(i) && (i == 0 || blank(i-1)) {
			b.starts = append(b.starts, i)
		}
	}
	if len(b.starts) == 0 {
		b.starts = []int{0}
	}
	b.starts[0] = 0
	b.setKeys(b.lines[0])
	return b
}

func (b *block) end(c int) int {
	if c+1 < len(b.starts) {
		return b.starts[c+1]
	}
	if b.tail >= 0 {
		return b.tail
	}
	w := 0
	for _, l := range b.lines {
		w = max(w, len(l))
	}
	return w
}

// cell returns column c of line l, padded to the column's width.
func (b *block) cell(l []rune, c int) string {
	s, e := b.starts[c], b.end(c)
	var out []rune
	for i := s; i < e; i++ {
		if i < len(l) {
			out = append(out, l[i])
		} else {
			out = append(out, ' ')
		}
	}
	return string(out)
}

func (b *block) setKeys(header []rune) {
	b.keys = make([]bool, len(b.starts))
	any := false
	name := func(c int) string { return strings.Trim(strings.TrimSpace(b.cell(header, c)), "| ") }
	for c := range b.starts {
		b.keys[c] = b.keys[c] || keyHeaders[name(c)]
		// a header with a blank ("out tok/s") may span two columns of a gutter split
		if c+1 < len(b.starts) && keyHeaders[name(c)+" "+name(c+1)] {
			b.keys[c], b.keys[c+1] = true, true
		}
		any = any || b.keys[c]
	}
	if !any && len(b.keys) > 0 {
		b.keys[0] = true
	}
}

// fit returns the block's lines with the key columns and the others that fit after
// skip, and whether some remain hidden to the right.
func (b block) fit(w, skip int) ([]string, bool) {
	total := b.end(len(b.starts)-1) - b.starts[0]
	if b.tail >= 0 {
		total++
	}
	shown := make([]bool, len(b.starts))
	used := 0
	if b.tail >= 0 {
		used = 1
	}
	for c, k := range b.keys {
		if k {
			shown[c] = true
			used += b.end(c) - b.starts[c]
		}
	}
	more := false
	if total > w {
		n := 0
		for c := range b.starts {
			if b.keys[c] {
				continue
			}
			if n < skip {
				n++
				continue
			}
			cw := b.end(c) - b.starts[c]
			if used+cw > w || more {
				more = true
				continue
			}
			shown[c] = true
			used += cw
		}
	} else {
		for c := range shown {
			shown[c] = true
		}
	}
	out := make([]string, len(b.lines))
	for i, l := range b.lines {
		var s strings.Builder
		for c := range b.starts {
			if shown[c] {
				s.WriteString(b.cell(l, c))
			}
		}
		if b.tail >= 0 && b.tail < len(l) {
			s.WriteString(string(l[b.tail:]))
		}
		out[i] = strings.TrimRight(s.String(), " ")
	}
	return out, more
}
