// Package golden compares rendered screens with the files under testdata; run the
// tests with -update to rewrite them after a deliberate change.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	for i, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "\x1b") {
			t.Errorf("%s line %d has an escape sequence: goldens use the ASCII theme", path, i+1)
		}
	}
}
