// Package golden compares rendered screens with the files under testdata; run the
// tests with -update to rewrite them after a deliberate change.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Sizes are the terminal sizes (columns, rows) every screen is checked at.
var Sizes = [][2]int{{60, 15}, {80, 24}, {120, 36}, {200, 60}}

// cut matches a figure cut short: an ellipsis inside or right after a number.
var cut = regexp.MustCompile(`[0-9][.,:%]?…`)

// NoCutNumbers fails when a line of view cuts a number ("2462.65 ± 2…"): screens
// drop decoration (hints, descriptions, columns past the key ones they scroll to)
// rather than cut a figure.
func NoCutNumbers(t *testing.T, name, view string) {
	t.Helper()
	for i, l := range strings.Split(view, "\n") {
		if loc := cut.FindStringIndex(l); loc != nil {
			t.Errorf("%s line %d cuts a number: %q", name, i+1, l)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Assert compares got with testdata/name.golden (rewriting it with -update).
func Assert(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the view (run with -update after a deliberate change)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
	NoCutNumbers(t, name, got)
	for i, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "\x1b") {
			t.Errorf("%s line %d has an escape sequence: goldens use the ASCII theme", path, i+1)
		}
	}
}
