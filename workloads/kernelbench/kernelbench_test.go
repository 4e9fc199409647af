package kernelbench

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"llmbench/kernels/cpu"
	"llmbench/workloads"
)

// tiny is a spec that runs every mask in well under a second.
func tiny() workloads.KernelSpec {
	return workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks, Heads: 2, SeqLen: 256, HeadDim: 16, BlockSize: 32,
		Window: 64, PrefixLen: 40, Documents: 5, Reps: 1, Threads: 2}.WithDefaults()
}

// TestAttentionMasksSuite runs every mask at a tiny size: one section per mask in
// attention-gym's order, each with its box, a passed correctness check, the three
// rows and the block-mask picture; the typed results agree with the sections.
func TestAttentionMasksSuite(t *testing.T) {
	var events []Event
	spec := tiny()
	rep, err := Run(context.Background(), spec, func(e Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sections) != len(Masks()) || rep.Partial {
		t.Fatalf("%d sections (partial %v), want %d", len(rep.Sections), rep.Partial, len(Masks()))
	}
	var res []MaskResult
	if err := json.Unmarshal(rep.Data, &res); err != nil || len(res) != len(Masks()) {
		t.Fatalf("data: %v, %d results", err, len(res))
	}
	sections := 0
	for _, e := range events {
		if e.Section != nil {
			sections++
		}
		if e.Total != (spec.Reps+1)*len(Masks()) || e.Done > e.Total {
			t.Errorf("event %+v: total should be a warmup and %d rounds per mask", e, spec.Reps)
		}
	}
	if sections != len(Masks()) {
		t.Errorf("%d section events, want %d", sections, len(Masks()))
	}
	for i, s := range rep.Sections {
		r := res[i]
		if !strings.HasPrefix(s.Text, Box(r.Title)+"Correctness check passed ✅") {
			t.Errorf("%s: section starts\n%s", r.Mask, s.Text[:min(len(s.Text), 400)])
		}
		if len(s.Table.Rows) != 3 || s.Table.Rows[0][0] != ImplCausal || s.Table.Rows[1][0] != ImplDense || s.Table.Rows[2][0] != ImplSparse {
			t.Errorf("%s: rows %v", r.Mask, s.Table.Rows)
		}
		if !strings.Contains(s.Text, "Block Mask:\nBlockMask(shape=(") || !strings.Contains(s.Text, r.Picture) {
			t.Errorf("%s: no block mask picture", r.Mask)
		}
		for _, im := range r.Impls {
			if !(im.FwdMs > 0 && im.BwdMs > 0 && im.FwdTFLOPS > 0 && im.BwdTFLOPS > 0) {
				t.Errorf("%s/%s: timings %+v", r.Mask, im.Name, im)
			}
		}
	}
	byMask := map[string]MaskResult{}
	for _, r := range res {
		byMask[r.Mask] = r
	}
	// No mask: nothing skipped. Sliding window and document masks: mostly skipped.
	for _, m := range []string{"alibi", "softcap", "softcap_approx"} {
		if byMask[m].Sparsity != 0 {
			t.Errorf("%s: sparsity %v, want 0", m, byMask[m].Sparsity)
		}
	}
	if s := byMask["sliding_window"].Sparsity; s < 0.5 {
		t.Errorf("sliding window 64 over 256: sparsity %v", s)
	}
	if !strings.Contains(rep.Text(), FLOPFormula) || len(rep.Checks) != 0 {
		t.Errorf("notes or checks: %q, %v", rep.Notes, rep.Checks)
	}
}

// TestAttentionMasksCancel: a cancelled run stops at once and returns a partial report.
func TestAttentionMasksCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rep, err := Run(ctx, tiny(), func(e Event) {
		if e.Section != nil {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || rep == nil || !rep.Partial || len(rep.Sections) != 1 {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// TestValidate covers the spec's sad paths.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*workloads.KernelSpec)
		want string
	}{
		{"suite", func(s *workloads.KernelSpec) { s.Suite = "nope" }, "--suite"},
		{"mask", func(s *workloads.KernelSpec) { s.Cases = []string{"causal", "diagonal"} }, `no mask "diagonal"`},
		{"heads", func(s *workloads.KernelSpec) { s.Heads = -1 }, "--heads"},
		{"docs", func(s *workloads.KernelSpec) { s.Documents = 300 }, "--documents"},
		{"threads", func(s *workloads.KernelSpec) { s.Threads = -2 }, "-t"},
	} {
		s := tiny()
		tc.edit(&s)
		if err := Validate(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
	if err := Validate(tiny()); err != nil {
		t.Errorf("tiny: %v", err)
	}
}

// TestGrid checks tabulate's grid layout: rules, header rule, alignment.
func TestGrid(t *testing.T) {
	got := Grid(&Table{Columns: []string{"Operation", "FW Time (ms)"}, Numeric: []bool{false, true},
		Rows: [][]string{{"causal fused", "6.6376"}, {"dense + mask", "34.8769"}}})
	want := `+--------------+--------------+
| Operation    | FW Time (ms) |
+==============+==============+
| causal fused |       6.6376 |
| dense + mask |      34.8769 |
+--------------+--------------+
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	box := Box("Causal Mask")
	lines := strings.Split(strings.TrimSuffix(box, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "╔═") || !strings.Contains(lines[1], "Causal Mask") {
		t.Fatalf("box:\n%s", box)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n != boxWidth {
			t.Errorf("box line %q is %d wide, want %d", l, n, boxWidth)
		}
	}
}

// TestPicture draws a causal 4×4 block map (partial diagonal, full below, skipped
// above) and a 40×40 one folded to 20 cells a side.
func TestPicture(t *testing.T) {
	c := cpu.New(1)
	defer c.Close()
	bm := c.NewBlockMap(causal, 1, 1, 64, 64, 16)
	if got, want := Picture(bm), "░░\n██░░\n████░░\n██████░░\n"; got != want {
		t.Errorf("causal:\n%s\nwant\n%s", got, want)
	}
	big := Picture(c.NewBlockMap(causal, 1, 1, 400, 400, 10))
	lines := strings.Split(strings.TrimSuffix(big, "\n"), "\n")
	if len(lines) != pictureCells || lines[0] != "░░" || lines[19] != strings.Repeat("██", 19)+"░░" {
		t.Errorf("folded picture:\n%s", big)
	}
}

// TestDocumentIDs: the documents cover the sequence in order, each non-empty.
func TestDocumentIDs(t *testing.T) {
	s := tiny()
	s.Batch = 2
	ids := DocumentIDs(s)
	if len(ids) != 2 || string(fmtIDs(ids[0])) == string(fmtIDs(ids[1])) {
		t.Fatalf("batches should differ: %v", ids)
	}
	for _, row := range ids {
		if len(row) != s.SeqLen || row[0] != 0 || row[len(row)-1] != int32(s.Documents-1) {
			t.Fatalf("ids %v", row)
		}
		for i := 1; i < len(row); i++ {
			if d := row[i] - row[i-1]; d != 0 && d != 1 {
				t.Fatalf("documents out of order at %d: %v", i, row)
			}
		}
	}
}

func fmtIDs(x []int32) []byte {
	b, _ := json.Marshal(x)
	return b
}

// TestFLOPs checks attention-gym's count: 4·B·H·S²·D·density forward, 2.5× backward.
func TestFLOPs(t *testing.T) {
	if got := FwdFLOPs(16, 16, 8192, 8192, 64, 0.5); got != 0.5*4*16*16*8192*8192*64 {
		t.Errorf("fwd %v", got)
	}
	if got := BwdFLOPs(1, 2, 3, 5, 7, 1); got != 10*2*3*5*7 {
		t.Errorf("bwd %v", got)
	}
}

// TestSparseChecks: the acceptance bound is half the ideal speed-up, forward and
// backward, of the fastest rounds, and only the checked masks count.
func TestSparseChecks(t *testing.T) {
	mk := func(mask string, sparsity, fw, bw float64) MaskResult {
		return MaskResult{Mask: mask, Sparsity: sparsity, Impls: []Impl{
			{Name: ImplDense, FwdRunsMs: []float64{300, 100}, BwdRunsMs: []float64{100, 250}},
			{Name: ImplSparse, FwdRunsMs: []float64{100 / fw, 3 * 100 / fw}, BwdRunsMs: []float64{100 / bw, 100}}}}
	}
	// sparsity 0.868: ideal 7.58×, bound 3.79×.
	got := sparseChecks([]MaskResult{mk("sliding_window", 0.868, 3.8, 4), mk("document", 0.868, 5, 3.7), mk("causal", 0.5, 1, 1)})
	if len(got) != 2 || !got[0].Pass || got[1].Pass {
		t.Fatalf("checks %+v", got)
	}
	if !strings.Contains(got[1].Detail, "bound 3.79×") {
		t.Errorf("detail %q", got[1].Detail)
	}
	if none := sparseChecks([]MaskResult{mk("causal", 0.5, 1, 1)}); len(none) != 1 || none[0].Pass {
		t.Errorf("no checked mask ran: %+v", none)
	}
}

// TestRelErr: scale-relative, absolute below 1, NaN propagates.
func TestRelErr(t *testing.T) {
	if e := RelErr([]float32{10, 1}, []float32{10.5, 1}); math.Abs(e-0.5/10.5) > 1e-9 {
		t.Errorf("relative: %v", e)
	}
	if e := RelErr([]float32{0.1}, []float32{0.2}); math.Abs(e-0.1) > 1e-7 {
		t.Errorf("absolute: %v", e)
	}
	if e := RelErr([]float32{float32(math.NaN())}, []float32{1}); !math.IsNaN(e) {
		t.Errorf("NaN: %v", e)
	}
}

// TestPagedSuiteWired runs the smallest paged-attention case through the suite table: one
// section with the published columns, the checks as notes, or as checks under Check.
func TestPagedSuiteWired(t *testing.T) {
	spec := workloads.KernelSpec{Suite: workloads.SuitePagedAttention, Cases: []string{"decode-small"}, Reps: 1, Threads: 2}.WithDefaults()
	var sections int
	rep, err := Run(context.Background(), spec, func(e Event) {
		if e.Section != nil {
			sections++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sections) != 1 || sections != 1 || len(rep.Sections[0].Table.Rows) != 1 || rep.Sections[0].Table.Rows[0][0] != "decode-small" {
		t.Fatalf("sections %+v", rep.Sections)
	}
	text := rep.Text()
	if !strings.Contains(text, "case         | mode") || !strings.Contains(text, "check ") || len(rep.Checks) != 0 || strings.Count(text, "check ") != len(rep.Notes) {
		t.Errorf("text:\n%s\nchecks %v notes %v", text, rep.Checks, rep.Notes)
	}
	var pr PagedReport
	if err := json.Unmarshal(rep.Data, &pr); err != nil || len(pr.Results) != 1 {
		t.Errorf("data: %v %+v", err, pr)
	}
	spec.Check = true
	rep, _ = PagedSuiteReport(spec, &pr)
	if len(rep.Checks) != len(pr.Checks) || len(rep.Checks) == 0 || len(rep.Notes) != 0 {
		t.Errorf("Check: checks %v, notes %v", rep.Checks, rep.Notes)
	}
	spec.Cases = []string{"decode-huge"}
	if err := Validate(spec); err == nil || !strings.Contains(err.Error(), `no paged-attention case "decode-huge"`) {
		t.Errorf("bad case: %v", err)
	}
}
