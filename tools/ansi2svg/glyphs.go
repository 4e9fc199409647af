package main

import (
	"fmt"
	"math"
	"strings"
)

// Box-drawing and block characters are drawn as shapes filling their cells, so that
// borders and bars join up whatever the font's line height. Shapes of one colour go
// into one <path>: its parts are rasterised as one shape, so the joins between cells
// leave no seams.

// boxArms describes a box-drawing character by its arms from the cell's centre: up,
// down, left, right, each 0 (none), 1 (light), 2 (heavy) or 3 (double).
var boxArms = map[rune][4]int{
	'─': {0, 0, 1, 1}, '│': {1, 1, 0, 0}, '━': {0, 0, 2, 2}, '┃': {2, 2, 0, 0},
	'┌': {0, 1, 0, 1}, '┐': {0, 1, 1, 0}, '└': {1, 0, 0, 1}, '┘': {1, 0, 1, 0},
	'╭': {0, 1, 0, 1}, '╮': {0, 1, 1, 0}, '╰': {1, 0, 0, 1}, '╯': {1, 0, 1, 0},
	'┏': {0, 2, 0, 2}, '┓': {0, 2, 2, 0}, '┗': {2, 0, 0, 2}, '┛': {2, 0, 2, 0},
	'├': {1, 1, 0, 1}, '┤': {1, 1, 1, 0}, '┬': {0, 1, 1, 1}, '┴': {1, 0, 1, 1}, '┼': {1, 1, 1, 1},
	'┣': {2, 2, 0, 2}, '┫': {2, 2, 2, 0}, '┳': {0, 2, 2, 2}, '┻': {2, 0, 2, 2}, '╋': {2, 2, 2, 2},
	'═': {0, 0, 3, 3}, '║': {3, 3, 0, 0}, '╔': {0, 3, 0, 3}, '╗': {0, 3, 3, 0}, '╚': {3, 0, 0, 3}, '╝': {3, 0, 3, 0},
	'╠': {3, 3, 0, 3}, '╣': {3, 3, 3, 0}, '╦': {0, 3, 3, 3}, '╩': {3, 0, 3, 3}, '╬': {3, 3, 3, 3},
	'╴': {0, 0, 1, 0}, '╵': {1, 0, 0, 0}, '╶': {0, 0, 0, 1}, '╷': {0, 1, 0, 0},
}

// shapes collects the filled outlines of the screen's box and block characters by
// fill (colour and opacity), in first-use order.
type shapes struct {
	paths map[string]*strings.Builder
	order []string
}

// add appends an outline to the path of fill.
func (s *shapes) add(fill, d string) {
	if s.paths == nil {
		s.paths = map[string]*strings.Builder{}
	}
	b, ok := s.paths[fill]
	if !ok {
		b = &strings.Builder{}
		s.paths[fill] = b
		s.order = append(s.order, fill)
	}
	b.WriteString(d)
}

// rect adds the rectangle [x0, x1] × [y0, y1].
func (s *shapes) rect(fill string, x0, y0, x1, y1 float64) {
	s.add(fill, fmt.Sprintf("M%s %sH%sV%sH%sZ", fx(x0), fx(y0), fx(x1), fx(y1), fx(x0)))
}

// write emits one <path> per fill; a fill is "#rrggbb" or "#rrggbb/opacity".
func (s *shapes) write(b *strings.Builder) {
	for _, fill := range s.order {
		colour, opacity, _ := strings.Cut(fill, "/")
		if opacity != "" {
			opacity = ` fill-opacity="` + opacity + `"`
		}
		fmt.Fprintf(b, `<path fill="%s"%s d="%s"/>`+"\n", colour, opacity, s.paths[fill].String())
	}
}

// px rounds to the pixel grid, so lines land on whole pixels and stay crisp.
func px(v float64) float64 { return math.Round(v) }

// glyph adds the shape of a box-drawing or block character r in colour fg in the cell
// whose top-left corner is (x, y), and reports whether r is one.
func (s *shapes) glyph(r rune, x, y float64, fg string) bool {
	x0, y0, x1, y1 := px(x), px(y), px(x+cellW), px(y+cellH)
	if arms, ok := boxArms[r]; ok {
		cx, cy := px(x+cellW/2), px(y+cellH/2)
		for i, w := range arms {
			if w == 0 {
				continue
			}
			t := 1.0 // light: 1 px
			if w == 2 {
				t = 2
			}
			lines := []float64{0}
			if w == 3 {
				lines = []float64{-2, 2}
			}
			for _, o := range lines {
				switch i {
				case 0: // up: from the top edge to past the centre, so corners close
					s.rect(fg, cx+o-t/2, y0, cx+o+t/2, cy+t/2)
				case 1: // down
					s.rect(fg, cx+o-t/2, cy-t/2, cx+o+t/2, y1)
				case 2: // left
					s.rect(fg, x0, cy+o-t/2, cx+t/2, cy+o+t/2)
				case 3: // right
					s.rect(fg, cx-t/2, cy+o-t/2, x1, cy+o+t/2)
				}
			}
		}
		return true
	}
	switch {
	case r >= '▁' && r <= '█': // lower eighths up to the full block
		s.rect(fg, x0, y1-px(cellH*float64(r-'▁'+1)/8), x1, y1)
	case r >= '▉' && r <= '▏': // left seven eighths down to one eighth
		s.rect(fg, x0, y0, x0+px(cellW*float64('▏'-r+1)/8), y1)
	case r == '▀':
		s.rect(fg, x0, y0, x1, px(y+cellH/2))
	case r == '▐':
		s.rect(fg, px(x+cellW/2), y0, x1, y1)
	case r == '▔':
		s.rect(fg, x0, y0, x1, y0+px(cellH/8))
	case r == '▕':
		s.rect(fg, x1-px(cellW/8), y0, x1, y1)
	case r >= '░' && r <= '▓':
		s.rect(fmt.Sprintf("%s/%.2f", fg, 0.25*float64(r-'░'+1)), x0, y0, x1, y1)
	default:
		return false
	}
	return true
}
