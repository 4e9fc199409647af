package kernelbench

import (
	"strings"
	"unicode/utf8"
)

// boxWidth is the width of a section's title box, attention-gym's print_header.
const boxWidth = 91

// Box draws title centred in a double-lined box, as attention-gym's print_header.
func Box(title string) string {
	inner := boxWidth - 4
	n := utf8.RuneCountInString(title)
	left := max(0, (inner-n)/2)
	right := max(0, inner-n-left)
	return "╔" + strings.Repeat("═", boxWidth-2) + "╗\n" +
		"║ " + strings.Repeat(" ", left) + title + strings.Repeat(" ", right) + " ║\n" +
		"╚" + strings.Repeat("═", boxWidth-2) + "╝\n"
}

// Grid writes t as tabulate's "grid" format (what attention-gym prints): +---+
// rules, a === rule under the header, text left-aligned, numeric columns
// right-aligned, one space of padding.
func Grid(t *Table) string {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = utf8.RuneCountInString(c)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	rule := func(ch string) string {
		var b strings.Builder
		for _, n := range w {
			b.WriteString("+" + strings.Repeat(ch, n+2))
		}
		return b.String() + "+\n"
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i < len(t.Numeric) && t.Numeric[i] {
				b.WriteString("| " + pad + c + " ")
			} else {
				b.WriteString("| " + c + pad + " ")
			}
		}
		return b.String() + "|\n"
	}
	var b strings.Builder
	b.WriteString(rule("-"))
	b.WriteString(line(t.Columns))
	b.WriteString(rule("="))
	for _, r := range t.Rows {
		b.WriteString(line(r))
	}
	b.WriteString(rule("-"))
	return b.String()
}
