package setup

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/tui/internal/golden"
	"llmbench/tui/theme"
	"llmbench/workloads"
)

func press(m Model, keys ...tea.KeyPressMsg) (Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, k := range keys {
		m, cmd = m.Update(k)
	}
	return m, cmd
}

var (
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	left  = tea.KeyPressMsg{Code: tea.KeyLeft}
	right = tea.KeyPressMsg{Code: tea.KeyRight}
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
	space = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	bksp  = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

func text(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

func newModel() Model {
	return New(theme.New(theme.ASCII), []File{{Name: "tiny.gguf", Path: "testdata/tiny.gguf", Size: 3 << 20, Type: "Q8_0", Where: "llama.cpp"}})
}

func runConfig(t *testing.T, m Model) Config {
	t.Helper()
	m, cmd := m.Update(enter)
	if cmd == nil {
		t.Fatalf("enter did not run: %s", m.errorMsg)
	}
	msg, ok := cmd().(RunMsg)
	if !ok {
		t.Fatalf("enter gave %T", cmd())
	}
	return msg.Config
}

func TestDefaultIsBuiltinBench(t *testing.T) {
	c := runConfig(t, newModel())
	if c.Kind != Bench || c.Model.Path != Builtin || c.Prompt != 512 || c.Gen != 128 || c.Reps != 5 {
		t.Errorf("default config %+v", c)
	}
}

func TestPickSynthetic(t *testing.T) {
	m, _ := press(newModel(), down, right, down, right, space)
	c := runConfig(t, m)
	if c.Model.Shape == "" || c.Model.Type == "" || c.Model.Path != "" {
		t.Fatalf("model %+v", c.Model)
	}
	// Moving through the rows does not change the pick.
	m, _ = press(newModel(), down, down, down, down)
	if c := runConfig(t, m); c.Model.Path != Builtin {
		t.Errorf("moving picked %+v", c.Model)
	}
}

// at returns m with the focus on row f.
func at(t *testing.T, m Model, f string) Model {
	t.Helper()
	i := slices.Index(m.rows(), f)
	if i < 0 {
		t.Fatalf("no row %q in %v", f, m.rows())
	}
	m.focus = i
	return m
}

// set replaces the text of row f by v, as a user would: ctrl+u, then typing.
func set(t *testing.T, m Model, f, v string) Model {
	t.Helper()
	m = at(t, m, f)
	m, _ = press(m, ctrlU)
	m, _ = press(m, text(v)...)
	return m
}

var ctrlU = tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}

func TestEditNumbers(t *testing.T) {
	m := set(t, newModel(), rowPP, "64x")
	if _, err := m.Config(); err == nil || err.Error() != "pp: a whole number ≥ 0" {
		t.Errorf("64x: %v", err)
	}
	m, _ = press(m, bksp)
	m = set(t, m, rowTG, "256")
	c := runConfig(t, m)
	if c.Prompt != 64 || c.Gen != 256 {
		t.Errorf("pp %d tg %d, want 64 256", c.Prompt, c.Gen)
	}
}

// TestTextField: the fields are textinputs: ←→ move the cursor, ctrl+w erases a
// word, a paste inserts at the cursor; while one has the focus it captures keys (q
// types a q) and the footer shows its keys instead of s/o.
func TestTextField(t *testing.T) {
	m := at(t, newModel(), rowPath)
	m, _ = press(m, text("ab/cd")...)
	m, _ = press(m, left, left)
	m, _ = press(m, text("q")...)
	if got := m.text(rowPath); got != "ab/qcd" {
		t.Errorf("typed at the cursor: %q, want ab/qcd", got)
	}
	m, _ = m.Update(tea.PasteMsg{Content: "XY"})
	if got := m.text(rowPath); got != "ab/qXYcd" {
		t.Errorf("pasted at the cursor: %q", got)
	}
	m, _ = press(m, tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl})
	if got := m.text(rowPath); got != "cd" { // the word before the cursor: ab/qXY
		t.Errorf("ctrl+w: %q, want cd", got)
	}
	if !m.Capturing() {
		t.Error("a text field with the focus does not capture keys")
	}
	var keys []string
	for _, b := range m.FooterNow() {
		keys = append(keys, b.Help().Key)
	}
	if got := strings.Join(keys, " "); !strings.Contains(got, "ctrl+w") || strings.Contains(got, "s/o") {
		t.Errorf("footer on a field: %s", got)
	}
	m = at(t, m, rowKind)
	if m.Capturing() {
		t.Error("a choice row captures keys")
	}
}

// TestPathExpandsHome: a pasted "~/…" path (quoted, as file managers paste it) is
// the file in the home folder.
func TestPathExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, "m.gguf"), []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := at(t, newModel(), rowPath)
	m, _ = m.Update(tea.PasteMsg{Content: "'~/m.gguf'"})
	if c := runConfig(t, m); c.Model.Path != filepath.Join(home, "m.gguf") {
		t.Errorf("path %q", c.Model.Path)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct{ v, want string }{{"0", "reps: a whole number ≥ 1"}, {"", "reps: a whole number ≥ 1"}} {
		m := set(t, newModel(), rowReps, tc.v)
		m, cmd := m.Update(enter)
		if cmd != nil || m.errorMsg != tc.want {
			t.Errorf("reps %q: error %q (cmd %v), want %q", tc.v, m.errorMsg, cmd != nil, tc.want)
		}
	}
	m := set(t, set(t, newModel(), rowPP, "0"), rowTG, "0")
	if _, err := m.Config(); err == nil {
		t.Error("pp 0 tg 0 accepted")
	}
	m = set(t, newModel(), rowPath, "nope.gguf")
	if _, err := m.Config(); err == nil || err.Error() != "path: no such file" {
		t.Errorf("missing path: %v", err)
	}
}

func serveModel(t *testing.T) Model {
	m := at(t, newModel(), rowKind)
	m, _ = press(m, right)
	return m
}

// TestCommaLists: concurrency, rate and power take comma lists, as the CLI does
// (`1,4,16` is three points, not 1416 or 12).
func TestCommaLists(t *testing.T) {
	m := serveModel(t)
	m.SetPower(Power{MinW: 200, MaxW: 700, DefaultW: 700})
	m = set(t, m, rowConc, "1,4,16")
	m = set(t, m, rowRate, "2.5, inf")
	m = set(t, m, rowPower, "300,200")
	c := runConfig(t, m)
	if !slices.Equal(c.Concurrency, []int{1, 4, 16}) || len(c.Rate) != 2 || c.Rate[0] != 2.5 || !math.IsInf(c.Rate[1], 1) ||
		!slices.Equal(c.PowerW, []float64{300, 200}) {
		t.Errorf("lists: c=%v rate=%v power=%v", c.Concurrency, c.Rate, c.PowerW)
	}
	if est := m.Estimate(); !strings.Contains(est, "6 points × 100 requests × 2 power limits") {
		t.Errorf("estimate %q", est)
	}
	for _, tc := range []struct {
		p      Power
		v, err string
	}{
		{Power{MinW: 200, MaxW: 700}, "100", "power W: 100 W is outside the GPU's 200–700 W"},
		{Power{Refused: "needs root"}, "300", "power W: cannot set power limits: needs root"},
		{Power{}, "300,x", "power W: watts, comma-separated (empty: leave the limit)"},
	} {
		m.SetPower(tc.p)
		m = set(t, m, rowPower, tc.v)
		if _, err := m.Config(); err == nil || err.Error() != tc.err {
			t.Errorf("power %q under %+v: %v, want %s", tc.v, tc.p, err, tc.err)
		}
	}
	m.SetPower(Power{Refused: "needs root"})
	m = set(t, m, rowPower, "")
	if !strings.Contains(m.View(), "needs root") {
		t.Error("Setup does not say setting a power limit needs root")
	}
}

// TestServeFields: every serve-bench choice reaches the config: dataset with its
// file, lengths, threads, KV cache type, max-num-seqs.
func TestServeFields(t *testing.T) {
	m := serveModel(t)
	m = at(t, m, rowDataset)
	for m.datasetName() != "sharegpt" {
		m, _ = press(m, right)
	}
	if _, err := m.Config(); err == nil || !strings.HasPrefix(err.Error(), "dataset file: ") {
		t.Errorf("sharegpt without a file: %v", err)
	}
	ds := filepath.Join(t.TempDir(), "sg.json")
	if err := os.WriteFile(ds, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	m = set(t, m, rowDSPath, ds)
	m = set(t, m, rowOutLen, "32")
	m = set(t, m, rowThreads, "2")
	m = set(t, m, rowMaxSeqs, "4")
	m = at(t, m, rowKV)
	m, _ = press(m, right, right) // default → f16 → q8_0
	c := runConfig(t, m)
	if c.Dataset != "sharegpt" || c.DatasetPath != ds || c.OutputLen != 32 || c.InputLen != 0 || c.Threads != 2 ||
		c.MaxNumSeqs != 4 || c.KVType != "q8_0" {
		t.Errorf("serve config %+v", c)
	}
	m = at(t, m, rowDataset)
	for m.datasetName() != "random" {
		m, _ = press(m, right)
	}
	m = set(t, m, rowInLen, "256")
	if c := runConfig(t, m); c.InputLen != 256 || c.DatasetPath != "" {
		t.Errorf("random: %+v", c)
	}
}

// TestRemoteBackend: an external server hides the local model, probes /v1/models
// after the URL is edited and shows what it serves, and the run is titled with the
// server's model, not a file picked on Setup.
func TestRemoteBackend(t *testing.T) {
	m := serveModel(t)
	m = at(t, m, rowPath)
	m, _ = press(m, text("local.gguf")...)
	var asked []string
	m.SetDetect(func(u string) (string, error) { asked = append(asked, u); return "qwen2.5-0.5b", nil })
	m = at(t, m, rowBackend)
	m, _ = press(m, right)
	if len(m.modelRows()) != 0 {
		t.Errorf("model rows shown for an external server: %v", m.modelRows())
	}
	m = set(t, m, rowURL, "http://h:1")
	m, cmd := m.Update(tea.KeyPressMsg{Code: '2', Text: "2"}) // http://h:12
	if cmd == nil {
		t.Fatal("editing the URL does not ask /v1/models")
	}
	pending := DetectMsg{Seq: m.seq, URL: "http://h:12", Pending: true}
	m, cmd = m.Update(pending)
	if cmd == nil {
		t.Fatal("no probe after the pause")
	}
	m, _ = m.Update(cmd())
	if len(asked) != 1 || asked[0] != "http://h:12" {
		t.Errorf("asked %v", asked)
	}
	m.SetSize(120, 30)
	if v := m.View(); !strings.Contains(v, "/v1/models: qwen2.5-0.5b") {
		t.Errorf("the detected model is not shown:\n%s", v)
	}
	c := runConfig(t, m)
	if c.Backend != "openai" || c.URL != "http://h:12" || c.Endpoint != "/v1/completions" || c.Model.Path != "" || strings.Contains(c.Describe(), "local.gguf") {
		t.Errorf("remote config %+v, title %q", c, c.Describe())
	}
	m = at(t, m, rowBackend)
	m, _ = press(m, right) // openai-chat: its own endpoint
	if c := runConfig(t, m); c.Backend != "openai-chat" || c.Endpoint != "/v1/chat/completions" {
		t.Errorf("openai-chat: %s %s", c.Backend, c.Endpoint)
	}
	m = set(t, m, rowEndpoint, "v1/x")
	if _, err := m.Config(); err == nil || !strings.HasPrefix(err.Error(), "endpoint: ") {
		t.Errorf("an endpoint without /: %v", err)
	}
	m = set(t, m, rowEndpoint, "/v1/x")
	if c := runConfig(t, m); c.Endpoint != "/v1/x" {
		t.Errorf("endpoint %q", c.Endpoint)
	}
	m = set(t, m, rowServed, "qwen2.5-0.5b")
	if d := runConfig(t, m).Describe(); !strings.Contains(d, "qwen2.5-0.5b") {
		t.Errorf("title %q does not name the served model", d)
	}
	// a stale answer (an older URL) is dropped
	m2, _ := m.Update(DetectMsg{Seq: m.seq - 1, URL: "http://old", Model: "old"})
	if m2.found.Model == "old" {
		t.Error("a stale /v1/models answer was shown")
	}
}

func TestGolden(t *testing.T) {
	serve := newModel()
	serve.focus = len(serve.modelRows())
	serve, _ = press(serve, right)
	for _, tc := range []struct {
		name string
		m    Model
	}{{"bench", newModel()}, {"serve", serve}, {"batch", batchModel(t)}, {"serve_draft", draftGolden(t)}} {
		for _, sz := range golden.Sizes {
			m := tc.m
			m.SetSize(sz[0], sz[1]-3) // the root takes header, error line and footer
			golden.Assert(t, fmt.Sprintf("%s_%dx%d", tc.name, sz[0], sz[1]), m.View())
		}
	}
}

// draftGolden is the published speculative-decoding setup: spec-base Q8_0 with its
// draft in Q8_0, --draft-max 24 --draft-min 1 --draft-p-min 0.6, the cursor on the
// draft model row.
func draftGolden(t *testing.T) Model {
	m := toDraft(t, draftSetup(t), synthPrefix+"spec-base-draft")
	m = set(t, m, rowDraftMax, "24")
	m = set(t, m, rowDraftMin, "1")
	m = set(t, m, rowDraftPMin, "0.6")
	return at(t, m, rowDraft)
}

// TestScrollKeepsFocus: at 60×15 (12 rows for the screen) every row the cursor
// moves onto is on screen, and the estimate line stays.
func TestScrollKeepsFocus(t *testing.T) {
	m := serveModel(t)
	m.SetSize(60, 12)
	for i := range m.rows() {
		m.focus = i
		v := m.View()
		if n := len(strings.Split(v, "\n")); n != 12 {
			t.Fatalf("%d lines", n)
		}
		if !strings.Contains(v, "> ") {
			t.Errorf("row %s (focused) is not on screen:\n%s", m.focused(), v)
		}
		if !strings.Contains(v, "Estimated:") {
			t.Errorf("the estimate scrolled away at row %s:\n%s", m.focused(), v)
		}
	}
}

// TestModelChecks: files found on the machine show size, type and where they were
// found; a file that is not a model is refused on Setup (with the check's reason)
// before any run is queued; a synthetic model shows its size and the free disk
// before it is written, and one the disk has no room for is refused.
func TestModelChecks(t *testing.T) {
	m := newModel()
	m.SetSize(120, 30)
	if v := m.View(); !strings.Contains(v, "tiny.gguf  3.0 MiB · llama.cpp · Q8_0") {
		t.Errorf("the found file's row:\n%s", v)
	}
	readme := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(readme, []byte("# llmbench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := 0
	m.SetCheck(func(p string) error {
		asked++
		return fmt.Errorf("%s: not a GGUF file (magic \"# ll\")", filepath.Base(p))
	})
	m = set(t, m, rowPath, readme)
	m, cmd := m.Update(enter)
	if cmd != nil || !strings.Contains(m.errorMsg, "README.md: not a GGUF file") {
		t.Errorf("README.md accepted: %q", m.errorMsg)
	}
	m.View()
	m.View()
	if asked != 1 {
		t.Errorf("the file was checked %d times (once per path)", asked)
	}

	m = newModel()
	m.SetPlan(func(shape, typ string) (Plan, error) {
		if typ == "F32" {
			return Plan{Note: "needs 4.6 GiB with margin, only 1.2 GiB free"}, nil
		}
		return Plan{Note: "607.2 MiB to write, 41.2 GiB free", Fits: true}, nil
	})
	m = at(t, m, rowType)
	m, _ = press(m, space)
	for _, w := range []int{60, 120, 200} {
		m.SetSize(w, 30)
		if v := m.View(); !strings.Contains(strings.ReplaceAll(v, "\n   ", " "), "607.2 MiB to write, 41.2 GiB free") {
			t.Errorf("%d columns: no size and free disk on Setup:\n%s", w, v)
		}
	}
	for m.types[m.typ] != "F32" {
		m, _ = press(m, right)
	}
	if _, err := m.Config(); err == nil || !strings.Contains(err.Error(), "only 1.2 GiB free") {
		t.Errorf("a model the disk cannot hold: %v", err)
	}
}

// TestTimeEstimate: no time before a run of the model; after one, the estimate says
// how long the next will take at its pace (prompt and generation t/s for bench,
// requests/s for serve-bench), power limits and sweep points included.
func TestTimeEstimate(t *testing.T) {
	m := newModel()
	if e := m.Estimate(); !strings.Contains(e, "time: known after a first run of this model") {
		t.Errorf("before a run: %q", e)
	}
	c, _ := m.Config()
	m.Learn(c, Pace{PromptTps: 512, GenTps: 128}) // pp512 1 s + tg128 1 s, × (5 reps + warmup)
	if e := m.Estimate(); !strings.Contains(e, "~12 s at the last run's pace") {
		t.Errorf("bench: %q", e)
	}
	s := serveModel(t)
	s = set(t, s, rowConc, "1,4")
	sc, _ := s.Config()
	s.Learn(sc, Pace{RequestsPerS: 10})
	if e := s.Estimate(); !strings.Contains(e, "~20 s at the last run's pace") { // 2 points × 100 requests at 10/s
		t.Errorf("serve: %q", e)
	}
}

// TestKernels: the workload row's third choice is a kernel suite: no model panel,
// the suite's rows (attention-masks: cases and sizes; paged-attention: cases only, its
// shapes are its own), edits validated inline, and enter runs the spec the CLI's
// flags would build (sizes as typed, the rest at the defaults).
func TestKernels(t *testing.T) {
	m := at(t, newModel(), rowKind)
	m, _ = press(m, right, right)
	if m.kind != Kernels || len(m.modelRows()) != 0 || m.focused() != rowKind {
		t.Fatalf("kind %v, model rows %v, focus %q", m.kind, m.modelRows(), m.focused())
	}
	want := []string{rowKind, rowSuite, rowCases, rowSeqLen, rowHeads, rowHeadDim, rowBlock, rowThreads, rowKReps, rowPower}
	if !slices.Equal(m.rows(), want) {
		t.Errorf("rows %v, want %v", m.rows(), want)
	}
	c := runConfig(t, m)
	def := workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks}.WithDefaults()
	if c.Kind != Kernels || !reflect.DeepEqual(c.Kernel, def) || c.Model != (workloads.BenchModel{}) {
		t.Errorf("default kernels config %+v", c)
	}
	if got := c.Describe(); got != "kernels · attention-masks · B=1 H=4 S=2048 D=64 · block 128 · r 3" {
		t.Errorf("describe %q", got)
	}
	m = set(t, m, rowSeqLen, "512")
	m = set(t, m, rowHeads, "2")
	m = set(t, m, rowHeadDim, "32")
	m = set(t, m, rowBlock, "64")
	m = set(t, m, rowThreads, "2")
	m = set(t, m, rowKReps, "1")
	m = set(t, m, rowCases, "causal, document")
	c = runConfig(t, m)
	want2 := workloads.KernelSpec{Suite: workloads.SuiteAttentionMasks, Cases: []string{"causal", "document"}, SeqLen: 512, Heads: 2,
		HeadDim: 32, BlockSize: 64, Threads: 2, Reps: 1}.WithDefaults()
	if !reflect.DeepEqual(c.Kernel, want2) {
		t.Errorf("kernel spec %+v, want %+v", c.Kernel, want2)
	}
	if e := m.Estimate(); !strings.Contains(e, "2 cases × 1 rep") || !strings.Contains(e, "2 threads") {
		t.Errorf("estimate %q", e)
	}
	// the time estimate from a run of the same suite at the same sizes
	m.Learn(c, Pace{RoundSeconds: 0.5})
	if e := m.Estimate(); !strings.Contains(e, "~2 s at the last run's pace") { // 2 cases × (1 + 1) rounds
		t.Errorf("estimate after a run: %q", e)
	}
	// bad values are refused where they are typed
	for _, bad := range []struct{ row, v, want string }{
		{rowCases, "causal,nope", `"nope" is not a case of attention-masks`},
		{rowSeqLen, "0", "a whole number ≥ 1"},
		{rowKReps, "x", "a whole number ≥ 1"},
	} {
		b := set(t, m, bad.row, bad.v)
		if _, err := b.Config(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%q: %v, want %q", bad.row, bad.v, err, bad.want)
		}
		if b, _ = press(b, enter); !strings.Contains(b.View(), "✗ cannot run: "+bad.row) {
			t.Errorf("%s=%q: not refused on screen:\n%s", bad.row, bad.v, b.View())
		}
	}
	// paged-attention: its cases, no sizes; the cases typed for another suite go
	m = at(t, m, rowSuite)
	m, _ = press(m, right)
	want = []string{rowKind, rowSuite, rowCases, rowThreads, rowKReps, rowPower}
	if !slices.Equal(m.rows(), want) || m.text(rowCases) != "" {
		t.Errorf("paged rows %v, cases %q", m.rows(), m.text(rowCases))
	}
	m = set(t, m, rowCases, "decode-long,varlen-light")
	c = runConfig(t, m)
	if k := c.Kernel; k.Suite != workloads.SuitePagedAttention || !slices.Equal(k.Cases, []string{"decode-long", "varlen-light"}) ||
		k.Threads != 2 || k.Reps != 1 || k.SeqLen != 0 {
		t.Errorf("paged spec %+v", k)
	}
	// SetConfig shows a kernels config as set up by hand
	n := newModel()
	n.SetConfig(Config{Kind: Kernels, Kernel: want2})
	if got := runConfig(t, n); !reflect.DeepEqual(got.Kernel, want2) {
		t.Errorf("SetConfig round trip %+v", got.Kernel)
	}
}

// batchModel is Setup on the batch workload (kind row → left twice: throughput, batch).
func batchModel(t *testing.T) Model {
	m := at(t, newModel(), rowKind)
	m, _ = press(m, left, left)
	return m
}

// TestBatchSetup: the fourth kind is TGI's benchmark with TGI's fields (sequence and
// decode length, a comma list of batch sizes, runs), refused values named, and the
// config round-trips through SetConfig.
func TestBatchSetup(t *testing.T) {
	m := batchModel(t)
	c := runConfig(t, m)
	if c.Kind != Batch || c.SequenceLength != 128 || c.DecodeLength != 8 || !slices.Equal(c.BatchSizes, []int{1, 2, 4, 8, 16, 32}) || c.Reps != 3 ||
		c.Model.Path != Builtin || c.PowerW != nil {
		t.Fatalf("batch config %+v", c)
	}
	if d := c.Describe(); d != "batch · stories260K · seq 128 dec 8 · bs 1,2,4,8,16,32 · r 3" {
		t.Errorf("describe %q", d)
	}
	if e := m.Estimate(); !strings.Contains(e, "6 batch sizes × 3 runs") || !strings.Contains(e, "34k tokens") {
		t.Errorf("estimate %q", e) // (1+2+4+8+16+32) × 136 × 4 = 34272
	}
	for _, bad := range []struct{ row, v, want string }{
		{rowDecLen, "1", "decode len: a whole number ≥ 2"},
		{rowBatch, "1,x", "batch sizes: "},
		{rowBatchSeq, "0", "sequence len: a whole number ≥ 1"},
	} {
		if _, err := set(t, m, bad.row, bad.v).Config(); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("%s %q: %v", bad.row, bad.v, err)
		}
	}
	m = set(t, m, rowBatch, "2,4")
	m = set(t, m, rowRuns, "5")
	c = runConfig(t, m)
	n := newModel()
	n.SetConfig(c)
	if got := runConfig(t, n); !slices.Equal(got.BatchSizes, []int{2, 4}) || got.Reps != 5 || got.Kind != Batch {
		t.Errorf("SetConfig round trip: %+v", got)
	}
}

// toDraft moves to the draft model row and presses → until the draft is id.
func toDraft(t *testing.T, m Model, id string) Model {
	t.Helper()
	m = at(t, m, rowDraft)
	for range m.draftChoices() {
		if m.draft == id {
			return m
		}
		m, _ = press(m, right)
	}
	t.Fatalf("the draft row does not offer %q", id)
	return m
}

// draftSetup returns a serve-bench Setup on the synthetic spec-base Q8_0 whose draft
// row offers a file found (a file that exists, so that it can run).
func draftSetup(t *testing.T) Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "draft.gguf")
	if err := os.WriteFile(path, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New(theme.New(theme.ASCII), []File{{Name: "draft.gguf", Path: path, Size: 4, Where: "folder"}})
	m = at(t, m, rowKind)
	m, _ = press(m, right) // serve-bench
	m = at(t, m, rowShape)
	for m.shapes[m.shape] != "spec-base" {
		m, _ = press(m, right)
	}
	m, _ = press(m, space, down) // picked; on its type
	for m.types[m.typ] != "Q8_0" {
		m, _ = press(m, right)
	}
	return m
}

// TestDraftRows drives the draft model's rows of an in-process serve-bench: none at
// first (no settings shown), then each kind of draft (the built-in model, a pair's
// draft shape with its type, a file found, a path) with the engine's defaults
// shown; the three settings typed, bad values named on their row; the config carries
// them, SetConfig shows them again, and they are hidden (and not run) for an external
// server, for bench and when the draft is none again.
func TestDraftRows(t *testing.T) {
	m := draftSetup(t)
	settings := []string{rowDraftMax, rowDraftMin, rowDraftPMin}
	if rows := m.rows(); !slices.Contains(rows, rowDraft) || slices.ContainsFunc(settings, func(r string) bool { return slices.Contains(rows, r) }) {
		t.Fatalf("rows with no draft: %v", rows)
	}
	if c := runConfig(t, m); c.Draft != (workloads.BenchModel{}) || c.DraftMax != 0 || c.DraftPMin != 0 || strings.Contains(c.Describe(), "draft") {
		t.Fatalf("no draft: %+v", c)
	}
	m = at(t, m, rowPath)
	m, _ = press(m, down) // path → draft model
	if m.focused() != rowDraft {
		t.Fatalf("below the path: %s", m.focused())
	}
	m, _ = press(m, right)
	c := runConfig(t, m)
	if c.Draft != (workloads.BenchModel{Path: Builtin}) || c.DraftMax != 16 || c.DraftMin != 0 || c.DraftPMin != 0.75 || m.focused() != rowDraft {
		t.Errorf("built-in draft: %+v %+v %d %g (focus %s)", c.Draft, c.DraftMax, c.DraftMin, c.DraftPMin, m.focused())
	}
	if got := m.rows()[len(m.modelRows())-4 : len(m.modelRows())]; !slices.Equal(got, []string{rowDraft, rowDraftMax, rowDraftMin, rowDraftPMin}) {
		t.Errorf("draft rows %v", got)
	}
	for m.draft != synthPrefix+"spec-base-draft" {
		m, _ = press(m, right)
	}
	m, _ = press(m, down) // the draft's type: Q8_0 first
	if m.focused() != rowDraftType || m.types[m.draftTyp] != "Q8_0" {
		t.Fatalf("on %s, type %s", m.focused(), m.types[m.draftTyp])
	}
	m, _ = press(m, right, left)
	m, _ = press(m, down) // draft max
	m, _ = press(m, ctrlU)
	m, _ = press(m, text("24")...)
	m, _ = press(m, down, ctrlU)
	m, _ = press(m, text("1")...)
	m, _ = press(m, down, ctrlU)
	m, _ = press(m, text("0.6")...)
	c = runConfig(t, m)
	if c.Draft != (workloads.BenchModel{Shape: "spec-base-draft", Type: "Q8_0"}) || c.DraftMax != 24 || c.DraftMin != 1 || c.DraftPMin != 0.6 {
		t.Errorf("draft config %+v max %d min %d p-min %g", c.Draft, c.DraftMax, c.DraftMin, c.DraftPMin)
	}
	if d := c.Describe(); d != "serve-bench · spec-base Q8_0 + draft spec-base-draft Q8_0 · random · c=8 · rate inf" {
		t.Errorf("describe %q", d)
	}

	// bad values: named in the error and on their row, where the cursor is
	for _, bad := range []struct{ row, v, want string }{
		{rowDraftMax, "0", "draft max: a whole number ≥ 1"},
		{rowDraftMax, "x", "draft max: a whole number ≥ 1"},
		{rowDraftMin, "25", "draft min: at most draft max (24)"},
		{rowDraftMin, "-1", "draft min: a whole number ≥ 0"},
		{rowDraftPMin, "1.5", "draft p-min: a probability from 0 to 1 (0: never stop early)"},
		{rowDraftPMin, "-0.1", "draft p-min: a probability from 0 to 1 (0: never stop early)"},
		{rowDraftPMin, "high", "draft p-min: a probability from 0 to 1 (0: never stop early)"},
	} {
		b := set(t, m, bad.row, bad.v)
		b, cmd := b.Update(enter)
		if cmd != nil || b.errorMsg != bad.want {
			t.Errorf("%s %q: error %q, want %q", bad.row, bad.v, b.errorMsg, bad.want)
		}
		b.SetSize(200, 40)
		line := ""
		for _, l := range strings.Split(b.View(), "\n") {
			if strings.Contains(l, "> "+bad.row) {
				line = l
			}
		}
		if want := "✗ " + strings.TrimPrefix(bad.want, bad.row+": "); !strings.Contains(line, want) {
			t.Errorf("%s %q: its row %q does not say %q", bad.row, bad.v, line, want)
		}
	}
	if c := runConfig(t, set(t, m, rowDraftPMin, "0")); c.DraftPMin != -1 {
		t.Errorf("p-min 0 (never stop early): %g, want -1", c.DraftPMin)
	}

	// SetConfig shows every kind of draft again, and Config gives it back
	path := strings.TrimPrefix(m.draftChoices()[len(m.draftChoices())-2], filePrefix)
	for _, d := range []workloads.BenchModel{{Path: Builtin}, {Shape: "spec-tiny-draft", Type: "F16"}, {Path: path}, {Path: filepath.Join(filepath.Dir(path), "draft.gguf")}} {
		want := c
		want.Draft, want.DraftMax, want.DraftMin, want.DraftPMin = d, 8, 2, -1
		n := New(theme.New(theme.ASCII), m.files)
		n.SetConfig(want)
		if got := runConfig(t, n); !reflect.DeepEqual(got, want) {
			t.Errorf("SetConfig round trip of draft %+v: %+v", d, got)
		}
	}
	n := newModel()
	n.SetConfig(Config{Kind: Serve, Model: c.Model, Dataset: "random", Prompts: 1, InputLen: 8, OutputLen: 8, Concurrency: []int{1}, Rate: []float64{1},
		Draft: workloads.BenchModel{Path: "/nowhere/d.gguf"}})
	if _, err := n.Config(); err == nil || err.Error() != "draft path: no such file" {
		t.Errorf("a draft path that is not there: %v", err)
	}
	if _, err := toDraft(t, m, rowPath).Config(); err == nil || err.Error() != "draft path: type or paste a .gguf path" {
		t.Errorf("the path chosen, none typed: %v", err)
	}
	if n.text(rowDraftMax) != "16" || n.text(rowDraftPMin) != "0.75" {
		t.Errorf("a draft with no settings shows max %s p-min %s, want the engine's 16 and 0.75", n.text(rowDraftMax), n.text(rowDraftPMin))
	}

	// hidden for an external server and for bench; none hides the settings again
	r := at(t, m, rowBackend)
	r, _ = press(r, right)
	if rc := runConfig(t, r); slices.Contains(r.rows(), rowDraft) || rc.Draft != (workloads.BenchModel{}) || rc.DraftMax != 0 {
		t.Errorf("external server: rows %v, config %+v", r.rows(), rc)
	}
	b := at(t, m, rowKind)
	b, _ = press(b, left)
	if bc := runConfig(t, b); slices.Contains(b.rows(), rowDraft) || bc.Draft != (workloads.BenchModel{}) {
		t.Errorf("bench: rows %v, config %+v", b.rows(), bc)
	}
	m = at(t, m, rowDraft)
	for m.draft != "" {
		m, _ = press(m, left)
	}
	if c := runConfig(t, m); slices.Contains(m.rows(), rowDraftMax) || c.Draft != (workloads.BenchModel{}) || c.DraftMax != 0 {
		t.Errorf("back to none: rows %v, config %+v", m.rows(), c)
	}
}

// TestDraftChoicesAndEstimate: the draft row offers none, the built-in model, every
// pair's draft shape (not the other shapes), the files found and a path; the memory
// the estimate line names adds the draft's weights and KV cache (computed here from
// the shapes), and a synthetic draft's size and free disk are said before it is
// written (refused when the disk has no room).
func TestDraftChoicesAndEstimate(t *testing.T) {
	m := draftSetup(t)
	want := []string{"", rowBuiltin, synthPrefix + "spec-tiny-draft", synthPrefix + "spec-base-draft", filePrefix + m.files[0].Path, rowPath}
	if got := m.draftChoices(); !slices.Equal(got, want) {
		t.Errorf("draft choices %q, want %q", got, want)
	}
	m = at(t, m, rowShape)
	for m.shapes[m.shape] != "spec-tiny" {
		m, _ = press(m, left)
	}
	m = toDraft(t, m, synthPrefix+"spec-tiny-draft")
	m = set(t, m, rowConc, "2")
	m = set(t, m, rowInLen, "100")
	m = set(t, m, rowOutLen, "50")
	c := runConfig(t, m)
	// KV: K and V, f16, every layer's KV heads × head size, for the longest context
	// (max(input, 1024) + output) of each of the 2 sequences
	kv := func(shape string) int64 {
		sh, err := synth.Lookup(shape)
		if err != nil {
			t.Fatal(err)
		}
		return 2 * int64(sh.Layers) * int64(sh.HeadsKV) * int64(sh.Embd/sh.Heads) * 2 * (1024 + 50) * 2
	}
	size := func(shape string) int64 {
		spec, err := synth.NewSpec(shape, "Q8_0", 0)
		if err != nil {
			t.Fatal(err)
		}
		n, err := spec.FileSize()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	wantMem := fmt.Sprintf("needs ~%s (KV %s) · the draft %s of it (KV %s)", human(size("spec-tiny")+kv("spec-tiny")+size("spec-tiny-draft")+kv("spec-tiny-draft")),
		human(kv("spec-tiny")+kv("spec-tiny-draft")), human(size("spec-tiny-draft")+kv("spec-tiny-draft")), human(kv("spec-tiny-draft")))
	if e := m.Estimate(); !strings.Contains(e, wantMem) {
		t.Errorf("estimate %q, want %q", e, wantMem)
	}
	if kv("spec-tiny-draft") >= kv("spec-tiny") || size("spec-tiny-draft") >= size("spec-tiny") {
		t.Error("the draft is not the smaller model") // the figures above would not tell them apart
	}
	if c.Draft.Shape != "spec-tiny-draft" {
		t.Fatalf("draft %+v", c.Draft)
	}
	if e := toDraft(t, m, rowBuiltin).Estimate(); !strings.Contains(e, "the draft "+human(int64(len(builtin.Stories260K)))+" of it") {
		t.Errorf("built-in draft: %q", e)
	}

	m.SetPlan(func(shape, typ string) (Plan, error) {
		if shape == "spec-tiny-draft" && typ == "F32" {
			return Plan{Note: "needs 9 MiB with margin, only 1 MiB free"}, nil
		}
		return Plan{Note: shape + " to write, 41.2 GiB free", Fits: true}, nil
	})
	if e := m.Estimate(); !strings.Contains(e, "spec-tiny-draft Q8_0: spec-tiny-draft to write, 41.2 GiB free") {
		t.Errorf("the draft's plan is not on the estimate line: %q", e)
	}
	m = at(t, m, rowDraftType)
	for m.types[m.draftTyp] != "F32" {
		m, _ = press(m, right)
	}
	if _, err := m.Config(); err == nil || err.Error() != "draft type: needs 9 MiB with margin, only 1 MiB free" {
		t.Errorf("a draft the disk cannot hold: %v", err)
	}
}
