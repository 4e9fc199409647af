package columns

import (
	"strings"
	"testing"

	"llmbench/tui/components/panel"
)

// TestFitGrid: a grid table (tabulate's, as the kernel suites print it) wider than
// the screen shows whole columns, the first (what a row is) always, its rules and
// rows cut at the same joints; → (skip) shows the next ones.
func TestFitGrid(t *testing.T) {
	text := strings.Join([]string{
		"+-----------+--------+--------+",
		"| Operation |   FW   |   BW   |",
		"+===========+========+========+",
		"| causal    | 1.8000 | 4.5000 |",
		"+-----------+--------+--------+",
	}, "\n")
	got, more := Fit(text, 22, 0)
	want := []string{"+-----------+--------+", "| Operation |   FW   |", "+===========+========+", "| causal    | 1.8000 |", "+-----------+--------+"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || !more {
		t.Errorf("fit at 22: more=%v\n%s", more, strings.Join(got, "\n"))
	}
	got, more = Fit(text, 22, 1)
	if !strings.Contains(got[3], "| causal    | 4.5000 |") || more {
		t.Errorf("skip 1: more=%v\n%s", more, strings.Join(got, "\n"))
	}
	if got, more = Fit(text, 40, 0); strings.Join(got, "\n") != text || more {
		t.Errorf("a table that fits changed:\n%s", strings.Join(got, "\n"))
	}
}

// TestFitBoxAndProse: a title box wider than the screen is narrowed (title
// centred); a long line of prose wraps at blanks, counting a wide rune as two cells.
func TestFitBoxAndProse(t *testing.T) {
	box := "╔" + strings.Repeat("═", 30) + "╗\n║" + strings.Repeat(" ", 10) + "Causal Mask" + strings.Repeat(" ", 9) + "║\n╚" + strings.Repeat("═", 30) + "╝"
	got, _ := Fit(box, 16, 0)
	want := []string{"╔══════════════╗", "║ Causal Mask  ║", "╚══════════════╝"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("box at 16:\n%s", strings.Join(got, "\n"))
	}
	got, _ = Fit("Correctness check passed ✅ (block-sparse vs dense)", 26, 0)
	want = []string{"Correctness check passed", "✅ (block-sparse vs dense)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("prose at 26: %q", got)
	}
	for _, l := range got {
		if panel.Width(l) > 26 {
			t.Errorf("%q is %d cells", l, panel.Width(l))
		}
	}
}

// TestFitNotes: consecutive lines of prose (a report's notes) wrap; lines aligned in
// columns by runs of blanks stay a table, cut by whole columns.
func TestFitNotes(t *testing.T) {
	notes := "shape: B=1 H=4 S=512 D=64, float32, block 128\nFLOPs: 4·B·H·S²·D forward, 2.5 times that backward"
	got, more := Fit(notes, 30, 0)
	if more || len(got) != 4 {
		t.Errorf("notes at 30: more=%v %q", more, got)
	}
	table := "Successful requests:      40\nBenchmark duration (s):    8.00"
	if _, more := Fit(table, 24, 0); !more {
		t.Error("an aligned block was wrapped as prose")
	}
}

// TestFitPipeTable: a " | " table (the paged-attention cases) wider than the screen
// shows its first column and speedup always, header and rows cut at the same joints
// even where the header alone would fit; the prose line after it wraps.
func TestFitPipeTable(t *testing.T) {
	text := "case  | shape            | speedup\n" +
		"small | B=1, q=1, kv=128 |   33.3% | after, faster\n" +
		"settings: 2 threads, blocks of 16"
	got, more := Fit(text, 30, 0)
	want := []string{"case  | speedup", "small |   33.3% | after, faster", "settings: 2 threads, blocks of", "16"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || !more {
		t.Errorf("fit at 30: more=%v\n%s", more, strings.Join(got, "\n"))
	}
}
