package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Geometry of the rendered terminal in SVG user units (pixels at scale 1).
const (
	fontSize = 14.0
	cellW    = 8.4  // advance of a cell (DejaVu Sans Mono is 0.602 em)
	cellH    = 18.0 // line height
	pad      = 14.0
	barH     = 28.0 // window title bar
)

// Default colours of the canvas and the 16 ANSI colours (Windows Terminal's Campbell
// scheme, readable on the dark canvas).
var (
	defaultFG = "#d4d7dc"
	defaultBG = "#15171c"
	ansi16    = [16]string{
		"#0c0c0c", "#c50f1f", "#13a10e", "#c19c00", "#0037da", "#881798", "#3a96dd", "#cccccc",
		"#767676", "#e74856", "#16c60c", "#f9f1a5", "#3b78ff", "#b4009e", "#61d6d6", "#f2f2f2",
	}
)

// style is the SGR state of a cell. Colours are "" (the default) or "#rrggbb".
type style struct {
	fg, bg                                  string
	bold, faint, italic, underline, reverse bool
	strike                                  bool
}

// cell is one terminal cell: its grapheme (empty for the right half of a wide one and
// for cells never written) and style.
type cell struct {
	text  string
	width int
	st    style
}

// screen is the grid a capture fills.
type screen struct {
	rows [][]cell
	cols int
}

// color256 returns the RGB of xterm colour n.
func color256(n int) string {
	switch {
	case n < 16:
		return ansi16[n]
	case n < 232:
		n -= 16
		lv := [6]int{0, 95, 135, 175, 215, 255}
		return fmt.Sprintf("#%02x%02x%02x", lv[n/36], lv[n/6%6], lv[n%6])
	case n < 256:
		g := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", g, g, g)
	}
	return ""
}

// sgr applies one SGR sequence's parameters to st.
func sgr(st style, params []int) style {
	if len(params) == 0 {
		return style{}
	}
	for i := 0; i < len(params); i++ {
		p := params[i]
		switch {
		case p == 0:
			st = style{}
		case p == 1:
			st.bold = true
		case p == 2:
			st.faint = true
		case p == 3:
			st.italic = true
		case p == 4:
			st.underline = true
		case p == 7:
			st.reverse = true
		case p == 9:
			st.strike = true
		case p == 22:
			st.bold, st.faint = false, false
		case p == 23:
			st.italic = false
		case p == 24:
			st.underline = false
		case p == 27:
			st.reverse = false
		case p == 29:
			st.strike = false
		case p >= 30 && p <= 37:
			st.fg = ansi16[p-30]
		case p >= 90 && p <= 97:
			st.fg = ansi16[p-90+8]
		case p == 39:
			st.fg = ""
		case p >= 40 && p <= 47:
			st.bg = ansi16[p-40]
		case p >= 100 && p <= 107:
			st.bg = ansi16[p-100+8]
		case p == 49:
			st.bg = ""
		case p == 38 || p == 48 || p == 58:
			var c string
			switch {
			case i+2 < len(params) && params[i+1] == 5:
				c = color256(params[i+2])
				i += 2
			case i+4 < len(params) && params[i+1] == 2:
				c = fmt.Sprintf("#%02x%02x%02x", params[i+2]&255, params[i+3]&255, params[i+4]&255)
				i += 4
			default:
				i = len(params) // malformed: ignore the rest
			}
			if p == 38 {
				st.fg = c
			} else if p == 48 {
				st.bg = c
			}
		}
	}
	return st
}

// parse fills a screen of cols×rows from captured output: text, newlines and SGR
// sequences; other control sequences are skipped. Text past the right edge or the
// last row is dropped.
func parse(in string, cols, rows int) *screen {
	s := &screen{cols: cols, rows: make([][]cell, rows)}
	for r := range s.rows {
		s.rows[r] = make([]cell, cols)
	}
	p := ansi.NewParser()
	var state byte
	var st style
	row, col := 0, 0
	for len(in) > 0 {
		seq, width, n, newState := ansi.DecodeSequence(in, state, p)
		state = newState
		in = in[n:]
		switch {
		case seq == "\n":
			row, col = row+1, 0
		case seq == "\r":
			col = 0
		case ansi.HasCsiPrefix(seq):
			if ansi.Cmd(p.Command()).Final() == 'm' && ansi.Cmd(p.Command()).Prefix() == 0 {
				var params []int
				for _, prm := range p.Params() {
					params = append(params, prm.Param(0))
				}
				st = sgr(st, params)
			}
		case width > 0 && row < rows:
			if col+width <= cols {
				s.rows[row][col] = cell{text: seq, width: width, st: st}
				for k := 1; k < width; k++ {
					s.rows[row][col+k] = cell{st: st}
				}
			}
			col += width
		}
	}
	return s
}

// colours resolves a style's foreground and background (reverse swapped, defaults
// filled in).
func (st style) colours() (fg, bg string) {
	fg, bg = st.fg, st.bg
	if fg == "" {
		fg = defaultFG
	}
	if st.reverse {
		if bg == "" {
			bg = defaultBG
		}
		fg, bg = bg, fg
	}
	return fg, bg
}

// esc escapes text for XML.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func fx(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// svg renders the screen as a standalone SVG: a window with a title bar, each
// background run as a rectangle, each run of same-styled text as one <text> whose
// characters sit at their cells' positions.
func (s *screen) svg(title string) string {
	w := pad*2 + float64(s.cols)*cellW
	h := barH + pad*2 + float64(len(s.rows))*cellH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s">`+"\n", fx(w), fx(h), fx(w), fx(h))
	fmt.Fprintf(&b, `<style>text{font-family:"DejaVu Sans Mono","Menlo","Consolas",monospace;font-size:%spx;white-space:pre}</style>`+"\n", fx(fontSize))
	fmt.Fprintf(&b, `<rect width="%s" height="%s" rx="8" fill="%s"/>`+"\n", fx(w), fx(h), defaultBG)
	fmt.Fprintf(&b, `<rect width="%s" height="%s" rx="8" fill="#262a31"/><rect y="%s" width="%s" height="8" fill="#262a31"/>`+"\n", fx(w), fx(barH), fx(barH-8), fx(w))
	for i, c := range []string{"#ff5f57", "#febc2e", "#28c840"} {
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="6" fill="%s"/>`, fx(18+float64(i)*20), fx(barH/2), c)
	}
	if title != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#9aa0a8" text-anchor="middle" style="font-size:12px">%s</text>`, fx(w/2), fx(barH/2+4), esc(title))
	}
	b.WriteString("\n")
	y0 := barH + pad
	var text strings.Builder
	var sh shapes
	for r, line := range s.rows {
		y := y0 + float64(r)*cellH
		// Backgrounds: runs of cells with the same non-default background.
		for c := 0; c < s.cols; {
			_, bg := line[c].st.colours()
			e := c + 1
			for e < s.cols {
				if _, b2 := line[e].st.colours(); b2 != bg {
					break
				}
				e++
			}
			if bg != "" {
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, fx(pad+float64(c)*cellW), fx(y), fx(float64(e-c)*cellW+0.3), fx(cellH+0.3), bg)
			}
			c = e
		}
		// Box-drawing and block characters as shapes.
		shape := make([]bool, s.cols)
		for c, cl := range line {
			if r := []rune(cl.text); len(r) == 1 {
				fg, _ := cl.st.colours()
				shape[c] = sh.glyph(r[0], pad+float64(c)*cellW, y, fg)
			}
		}
		// Text: runs of same-styled cells, spaces, empty cells and shapes breaking them.
		for c := 0; c < s.cols; {
			if line[c].text == "" || line[c].text == " " || shape[c] {
				c++
				continue
			}
			st := line[c].st
			var xs []string
			var txt strings.Builder
			e := c
			for e < s.cols && line[e].st == st && line[e].text != "" && line[e].text != " " && !shape[e] {
				xs = append(xs, fx(pad+float64(e)*cellW))
				txt.WriteString(line[e].text)
				e += max(1, line[e].width)
			}
			fg, _ := st.colours()
			attrs := ""
			if st.bold {
				attrs += ` font-weight="bold"`
			}
			if st.italic {
				attrs += ` font-style="italic"`
			}
			if st.faint {
				attrs += ` opacity="0.6"`
			}
			switch {
			case st.underline && st.strike:
				attrs += ` text-decoration="underline line-through"`
			case st.underline:
				attrs += ` text-decoration="underline"`
			case st.strike:
				attrs += ` text-decoration="line-through"`
			}
			fmt.Fprintf(&text, `<text x="%s" y="%s" fill="%s"%s>%s</text>`, strings.Join(xs, " "), fx(y+cellH*0.76), fg, attrs, esc(txt.String()))
			c = e
		}
		text.WriteString("\n")
	}
	sh.write(&b)
	b.WriteString(text.String())
	b.WriteString("</svg>\n")
	return b.String()
}
