// Command ansi2svg renders a terminal capture with colours (tmux capture-pane -e -p)
// as an SVG image of the terminal: `make screenshots` uses it for the README's
// pictures of the TUI.
//
//	tmux capture-pane -e -p -t tui | ansi2svg -cols 120 -rows 36 -title "llmbench tui" > shot.svg
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	cols := flag.Int("cols", 120, "terminal width in cells")
	rows := flag.Int("rows", 36, "terminal height in cells")
	title := flag.String("title", "", "window title")
	flag.Parse()
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ansi2svg:", err)
		os.Exit(1)
	}
	if _, err := io.WriteString(os.Stdout, parse(string(in), *cols, *rows).svg(*title)); err != nil {
		fmt.Fprintln(os.Stderr, "ansi2svg:", err)
		os.Exit(1)
	}
}
