package main

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	in := "ab\x1b[1;31mC\x1b[0m 世x\n\x1b[38;5;196mR\x1b[48;2;1;2;3mB\x1b[7mV\x1b[27;39;49m\x1b]8;;x\x07z\x1b[2Jq\ntoo long line here"
	s := parse(in, 8, 2)
	type want struct {
		row, col int
		text     string
		st       style
	}
	for _, w := range []want{
		{0, 0, "a", style{}},
		{0, 2, "C", style{fg: ansi16[1], bold: true}},
		{0, 4, "世", style{}},
		{0, 5, "", style{}}, // right half of the wide character
		{0, 6, "x", style{}},
		{1, 0, "R", style{fg: "#ff0000"}},
		{1, 1, "B", style{fg: "#ff0000", bg: "#010203"}},
		{1, 2, "V", style{fg: "#ff0000", bg: "#010203", reverse: true}},
		{1, 3, "z", style{}}, // OSC 8 and other CSI skipped
		{1, 4, "q", style{}},
	} {
		c := s.rows[w.row][w.col]
		if c.text != w.text || c.st != w.st {
			t.Errorf("cell %d,%d = %q %+v, want %q %+v", w.row, w.col, c.text, c.st, w.text, w.st)
		}
	}
	if s.rows[0][4].width != 2 {
		t.Errorf("wide character width %d", s.rows[0][4].width)
	}
	if len(s.rows) != 2 {
		t.Errorf("rows past the last were kept: %d", len(s.rows))
	}
}

func TestColor256(t *testing.T) {
	for n, want := range map[int]string{1: ansi16[1], 16: "#000000", 196: "#ff0000", 231: "#ffffff", 232: "#080808", 255: "#eeeeee"} {
		if got := color256(n); got != want {
			t.Errorf("color256(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestSVG: the SVG is well-formed XML, escapes text, places characters at their cells
// and draws reversed cells' background in their foreground colour.
func TestSVG(t *testing.T) {
	out := parse("<&>\x1b[7m ok \x1b[0m", 10, 1).svg(`a "title"`)
	dec := xml.NewDecoder(strings.NewReader(out))
	var texts []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, out)
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	if strings.Join(texts[1:], "|") != `a "title"|<&>|ok` { // texts[0] is the stylesheet
		t.Errorf("texts %q", texts)
	}
	if !strings.Contains(out, `x="14.0 22.4 30.8"`) {
		t.Errorf("characters not at their cells:\n%s", out)
	}
	if !strings.Contains(out, `width="33.9" height="18.3" fill="`+defaultFG+`"`) {
		t.Errorf("reversed run's background missing:\n%s", out)
	}
}

// TestGlyphs: box-drawing and block characters become shapes filling their cells on
// whole pixels (no text), one path per colour.
func TestGlyphs(t *testing.T) {
	out := parse("\x1b[31m┌─\x1b[0m▄x", 4, 1).svg("")
	// Row 0 spans y 42..60, the centre line y 51; cells start at x 14, 22.4, 30.8.
	for _, want := range []string{
		`<path fill="` + ansi16[1] + `" d="M17.5 50.5H18.5V60.0H17.5ZM17.5 50.5H22.0V51.5H17.5ZM22.0 50.5H27.5V51.5H22.0ZM26.5 50.5H31.0V51.5H26.5Z"/>`,
		`<path fill="` + defaultFG + `" d="M31.0 51.0H39.0V60.0H31.0Z"/>`, // ▄: the lower half
		`>x</text>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "┌") || strings.Contains(out, "▄") {
		t.Errorf("shapes also written as text:\n%s", out)
	}
}
