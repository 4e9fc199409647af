package report

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/result"
)

// kernelsDoc is a small kernel benchmark document: two sections of one table layout.
func kernelsDoc() result.Document {
	table := func(v string) *kernelbench.Table {
		return &kernelbench.Table{Columns: []string{"Operation", "FW Time (ms)"}, Numeric: []bool{false, true},
			Rows: [][]string{{"dense + mask", v}, {"block-sparse", "1.0"}}}
	}
	rep := &kernelbench.Report{Spec: workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks}.WithDefaults(),
		Sections: []kernelbench.Section{
			{Title: "Causal Mask", Text: kernelbench.Box("Causal Mask") + "Correctness check passed ✅\n", Table: table("2.0")},
			{Title: "Sliding <Window>", Text: "░░\n██░░\n", Table: table("9.5")}},
		Notes:  []string{"shape: B=1"},
		Checks: []kernelbench.Check{{Name: "sliding_window", Pass: false, Detail: "FW 2.00×"}},
		Data:   json.RawMessage(`[{"mask":"causal"}]`)}
	return result.Document{Title: "kernels · attention-masks", Kernels: rep}
}

// TestKernelsExports writes a kernel run in every format and reads each back.
func TestKernelsExports(t *testing.T) {
	dir := t.TempDir()
	d := kernelsDoc()
	for _, ext := range ExportFormats() {
		if err := Export(filepath.Join(dir, "k"+ext), d); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
	}
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(dir, "k"+ext))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	md := read(".md")
	for _, want := range []string{"## Causal Mask\n\n```text\n╔", "Correctness check passed ✅", "## Notes", "check FAIL: sliding_window: FW 2.00×"} {
		if !strings.Contains(md, want) {
			t.Errorf("md lacks %q:\n%s", want, md)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(read(".csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || strings.Join(rows[0], ",") != "suite,section,Operation,FW Time (ms),run_partial" || rows[4][1] != "Sliding <Window>" || rows[4][3] != "1.0" {
		t.Errorf("csv rows %q", rows)
	}
	var js map[string]any
	if err := json.Unmarshal([]byte(read(".json")), &js); err != nil {
		t.Fatal(err)
	}
	if js["kind"] != "kernels" || js["suite"] != "attention-masks" || len(js["sections"].([]any)) != 2 || len(js["results"].([]any)) != 1 {
		t.Errorf("json %v", js)
	}
	html := read(".html")
	for _, want := range []string{"<h2>Sliding &lt;Window&gt;</h2>", `<td class="r">9.5</td>`, "<pre>░░\n██░░\n</pre>", "kernels · attention-masks"} {
		if !strings.Contains(html, want) {
			t.Errorf("html lacks %q", want)
		}
	}
}

// TestCompareKernels: two kernel runs compare number by number of their tables (by
// section, row and column), times lower-better, the first number of a row the
// headline, difference columns and text cells left out.
func TestCompareKernels(t *testing.T) {
	a, b := kernelsDoc(), kernelsDoc()
	b.Title = "again"
	b.Kernels.Sections[0].Table.Rows[0][1] = "3.0"
	paged := &kernelbench.Table{Columns: []string{"case", "after_ms", "delta_ms", "speedup", "auto"},
		Rows: [][]string{{"decode-long", "1.500", "-0.750", "33.3%", "after, faster"}}}
	a.Kernels.Sections = append(a.Kernels.Sections, kernelbench.Section{Title: "Paged Attention", Table: paged})
	c, err := CompareDocs([]result.Document{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range c.Rows {
		labels = append(labels, r.Label())
	}
	want := []string{"Causal Mask: dense + mask FW Time (ms)", "Causal Mask: block-sparse FW Time (ms)",
		"Sliding <Window>: dense + mask FW Time (ms)", "Sliding <Window>: block-sparse FW Time (ms)",
		"Paged Attention: decode-long after_ms", "Paged Attention: decode-long speedup"}
	if !slices.Equal(labels, want) {
		t.Fatalf("rows %q, want %q", labels, want)
	}
	r := c.Rows[0]
	if r.Values[0] != 2 || r.Values[1] != 3 || r.DiffPct[1] != 50 || !r.LowerBetter || !r.Headline {
		t.Errorf("first row %+v", r)
	}
	if p := c.Rows[5]; p.Values[0] != 33.3 || !math.IsNaN(p.Values[1]) || p.LowerBetter || p.Headline {
		t.Errorf("speedup row %+v", p)
	}
}
