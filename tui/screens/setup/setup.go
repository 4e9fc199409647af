// Package setup is the Setup screen: pick a model (built-in, synthetic shape and type,
// a .gguf file here, or a path), for an in-process serve-bench a draft model
// (speculative decoding) and its settings, and a workload (bench, serve-bench, batch
// or throughput) with its parameters, or a kernel suite (kernels: no model) with its
// sizes, validated inline; enter starts the run.
package setup

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/prompt"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/discover"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/serving"
)

// Builtin is the model path that names the built-in model (as `llmbench bench` does).
const Builtin = "builtin:" + builtin.Name

// Kind is the workload a Config runs.
type Kind int

const (
	// Bench is llama-bench's pp/tg tests.
	Bench Kind = iota
	// Serve is the serving benchmark (vllm bench serve).
	Serve
	// Kernels is a kernel benchmark suite (llmbench kernels): no model.
	Kernels
	// Batch is TGI's prefill/decode benchmark per batch size (llmbench batch).
	Batch
	// Throughput is JetStream's throughput table, one row per weights type
	// (llmbench throughput).
	Throughput
)

// kinds is how many Kinds there are (the kind row cycles through them).
const kinds = 5

// String names the workload as the command line does.
func (k Kind) String() string {
	return [...]string{"bench", "serve-bench", "kernels", "batch", "throughput"}[k]
}

// Config is what the user set up: everything a front end needs to build the job
// (tui.ProfileOf turns it into one).
type Config struct {
	Kind  Kind
	Model workloads.BenchModel // Path (Builtin for the built-in model) or Shape and Type
	// bench (Reps: also batch's runs)
	Prompt, Gen, Reps int
	// batch: prompt and generated tokens per sequence, the batch sizes (TGI's flags)
	SequenceLength, DecodeLength int
	BatchSizes                   []int
	// Threads is the engine's threads (bench and in-process serve-bench); 0 = all cores.
	Threads int
	// KVType is the KV cache element type (f16, q8_0, f32); "" = the engine's default.
	KVType string
	// serve-bench
	Dataset     string // a name of workloads.Datasets
	DatasetPath string // the prompts file of sharegpt, sonnet and custom (~ expanded)
	Prompts     int    // requests per point
	// InputLen and OutputLen are the dataset's prompt and output lengths in tokens
	// (input for random and sonnet; output 0 = the dataset's own for sharegpt).
	InputLen, OutputLen int
	Concurrency         []int     // most requests in flight, one point each
	Rate                []float64 // requests per second, one point each; +Inf sends all at once
	// Backend is how requests reach the model: "" for the in-process engine, else a
	// serving client (openai, openai-chat, llamacpp, tgi) against URL.
	Backend string
	// URL is the base URL of an external server, Endpoint the path requests go to
	// (the backend's default: /v1/completions, /v1/chat/completions, …); ServedModel
	// the model it is asked for ("" = the first of its /v1/models).
	URL, Endpoint, ServedModel string
	MaxNumSeqs                 int // the in-process engine's --max-num-seqs; 0 = its default
	// Draft is the in-process serve-bench's draft model (speculative decoding): Path
	// (Builtin, a file) or Shape (a pair's draft shape, spec-base-draft, …) and Type;
	// zero = none. DraftMax, DraftMin and DraftPMin are llama-server's --draft-max,
	// --draft-min and --draft-p-min, as Setup shows them (the engine's defaults
	// filled in); DraftPMin < 0 never stops a draft early (Setup's 0).
	Draft              workloads.BenchModel
	DraftMax, DraftMin int
	DraftPMin          float64
	// PowerW runs everything at each GPU power limit (watts); empty leaves it as is.
	PowerW []float64
	// Kernel is a Kernels run's spec: the suite, its cases (none: all), the
	// attention-masks sizes (defaults filled; zero for paged-attention, whose cases
	// have their own shapes), threads and repetitions. Threads and Reps above are 0.
	Kernel workloads.KernelSpec
	// Throughput (JetStream's flags): the rows' weights types (empty: BF16 for a
	// synthetic shape, the file's own otherwise), the most sequences decoded together
	// and the cache, input and output lengths. KVType ("" = q8_0 with Q8_0 weights,
	// f16 otherwise), Prompts (--num-prompts), DatasetPath (the sharegpt file) and
	// Threads above are its other flags; a synthetic Model is written in BF16.
	WeightsTypes                                               []string
	BatchSize, MaxCacheLength, MaxInputLength, MaxOutputLength int
}

// Remote reports whether the run measures an external server.
func (c Config) Remote() bool { return c.Kind == Serve && c.Backend != "" }

// ModelName is how the model is shown: "stories260K", "llama-1b Q4_0", a file name;
// for an external server, what it serves (or its address until it says).
func (c Config) ModelName() string {
	switch {
	case c.Kind == Kernels:
		return c.kernelShape()
	case c.Kind == Throughput:
		return c.throughputModelName()
	case c.Remote() && c.ServedModel != "":
		return c.ServedModel
	case c.Remote():
		return strings.TrimPrefix(strings.TrimPrefix(c.URL, "http://"), "https://")
	case c.Model.Path == Builtin:
		return builtin.Name
	case c.Model.Shape != "":
		return c.Model.Shape + " " + c.Model.Type
	}
	return filepath.Base(c.Model.Path)
}

// DraftName is how the draft model is shown, as ModelName shows the model ("" when
// there is none).
func (c Config) DraftName() string {
	switch d := c.Draft; {
	case d == workloads.BenchModel{}:
		return ""
	case d.Path == Builtin:
		return builtin.Name
	case d.Shape != "":
		return d.Shape + " " + d.Type
	}
	return filepath.Base(c.Draft.Path)
}

// modelAndDraft is ModelName, with " + draft NAME" when a draft runs beside the model.
func (c Config) modelAndDraft() string {
	if d := c.DraftName(); d != "" {
		return c.ModelName() + " + draft " + d
	}
	return c.ModelName()
}

// Describe is the one-line summary of the run shown in the Live header and kept as
// its title: what ran (a remote run names the server's model, not a local file).
func (c Config) Describe() string {
	pw := ""
	if len(c.PowerW) > 0 {
		pw = " · " + joinFloats(c.PowerW) + " W"
	}
	switch c.Kind {
	case Bench:
		return fmt.Sprintf("bench · %s · pp %d tg %d · r %d", c.ModelName(), c.Prompt, c.Gen, c.Reps) + pw
	case Kernels:
		cases := ""
		if len(c.Kernel.Cases) > 0 {
			cases = " · " + strings.Join(c.Kernel.Cases, ",")
		}
		return fmt.Sprintf("kernels · %s%s · r %d", c.kernelShape(), cases, c.Kernel.Reps) + pw
	}
	if c.Kind == Throughput {
		return c.describeThroughput()
	}
	if c.Kind == Batch {
		return fmt.Sprintf("batch · %s · seq %d dec %d · bs %s · r %d", c.ModelName(), c.SequenceLength, c.DecodeLength, joinInts(c.BatchSizes), c.Reps)
	}
	return fmt.Sprintf("serve-bench · %s · %s · c=%s · rate %s", c.modelAndDraft(), c.Dataset, joinInts(c.Concurrency), joinFloats(c.Rate)) + pw
}

// kernelShape is a Kernels run's suite and the sizes it runs at ("attention-masks ·
// B=1 H=4 S=2048 D=64 · block 128"; paged-attention's cases have their own shapes).
func (c Config) kernelShape() string {
	k := c.Kernel
	if k.Suite != workloads.SuiteAttentionMasks {
		return k.Suite
	}
	return fmt.Sprintf("%s · B=%d H=%d S=%d D=%d · block %d", k.Suite, k.Batch, k.Heads, k.SeqLen, k.HeadDim, k.BlockSize)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func joinFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = "inf"
		if !math.IsInf(x, 1) {
			s[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return strings.Join(s, ",")
}

// BenchSpec returns the llama-bench spec of a Bench config.
func (c Config) BenchSpec() workloads.BenchSpec {
	sp := workloads.BenchSpec{
		Models: []workloads.BenchModel{c.Model},
		Prompt: []int{c.Prompt}, Gen: []int{c.Gen}, Threads: []int{c.Threads}, Reps: c.Reps,
	}
	if c.KVType != "" {
		sp.TypeK = []string{c.KVType}
	}
	return sp
}

// BatchSpec returns TGI's benchmark spec of a Batch config (one warmup per batch
// size, as TGI).
func (c Config) BatchSpec() workloads.BatchSpec {
	return workloads.BatchSpec{Model: c.Model, SequenceLength: c.SequenceLength, DecodeLength: c.DecodeLength,
		BatchSize: slices.Clone(c.BatchSizes), Runs: c.Reps, Threads: c.Threads, KVType: c.KVType}
}

// Power is what Setup knows of the GPU's power limit (main reads it from the
// telemetry device): the range and default in watts (0 when unknown) and, when
// limits cannot be set, why ("no GPU (NVML: no device)", "needs root").
type Power struct {
	MinW, MaxW, DefaultW, CurrentW float64
	Refused                        string
}

// RunMsg asks the root to start the run Config describes.
type RunMsg struct{ Config Config }

func runCmd(c Config) tea.Cmd { return func() tea.Msg { return RunMsg{Config: c} } }

// SaveMsg asks the root to write Config as a profile file at Path (Setup's `s`).
type SaveMsg struct {
	Config Config
	Path   string
}

// OpenMsg asks the root to load the profile file at Path into Setup (Setup's `o`).
type OpenMsg struct{ Path string }

// KeyMap holds the Setup screen's keys.
type KeyMap struct {
	Up, Down, Left, Right, Pick, Run, Save, Open key.Binding
	// Profile is how the footer shows Save and Open together.
	Profile key.Binding
}

// DefaultKeyMap returns the Setup keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:      key.NewBinding(key.WithKeys("up"), key.WithHelp("↑↓", "move")),
		Down:    key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "down")),
		Left:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←→", "change")),
		Right:   key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "change")),
		Pick:    key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pick")),
		Run:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Save:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save")),
		Open:    key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "open")),
		Profile: key.NewBinding(key.WithKeys("s", "o"), key.WithHelp("s/o", "profile")),
	}
}

// Footer returns the bindings the footer can show.
func (k KeyMap) Footer() []key.Binding {
	return []key.Binding{k.Up, k.Left, k.Pick, k.Run, k.Profile}
}

// Help returns every binding for the help view.
func (k KeyMap) Help() []key.Binding {
	long := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	return []key.Binding{k.Up, k.Left, k.Pick, k.Run,
		long(k.Save, "save the setup as a profile (YAML)"),
		long(k.Open, "open a profile file (one run) into Setup"),
		key.NewBinding(key.WithKeys("left", "right"), key.WithHelp("←→ home end", "move the cursor in a text field")),
		key.NewBinding(key.WithKeys("ctrl+w"), key.WithHelp("⌫ ctrl+w ctrl+u", "erase a character, a word, the field")),
		key.NewBinding(key.WithKeys("ctrl+v"), key.WithHelp("paste", "paste into a text field (a path, a URL)"))}
}

// row ids.
const (
	rowBuiltin  = "builtin"
	rowShape    = "shape"
	rowType     = "type"
	rowPath     = "path"
	rowKind     = "kind"
	rowPP       = "pp"
	rowTG       = "tg"
	rowReps     = "reps"
	rowThreads  = "threads"
	rowKV       = "kv cache"
	rowDataset  = "dataset"
	rowDSPath   = "dataset file"
	rowPrompts  = "prompts"
	rowInLen    = "input len"
	rowOutLen   = "output len"
	rowConc     = "concurrency"
	rowRate     = "rate"
	rowBackend  = "backend"
	rowURL      = "url"
	rowEndpoint = "endpoint"
	rowServed   = "served model"
	rowMaxSeqs  = "max seqs"
	rowPower    = "power W"
	rowSuite    = "suite"
	rowCases    = "cases"
	rowSeqLen   = "seq len"
	rowHeads    = "heads"
	rowHeadDim  = "head dim"
	rowBlock    = "block size"
	rowKReps    = "repetitions"
	rowBatchSeq = "sequence len"
	rowDecLen   = "decode len"
	rowBatch    = "batch sizes"
	rowRuns     = "runs"
	// the draft model's rows (in-process serve-bench, under the model's)
	rowDraft     = "draft model"
	rowDraftType = "draft type"
	rowDraftPath = "draft path"
	rowDraftMax  = "draft max"
	rowDraftMin  = "draft min"
	rowDraftPMin = "draft p-min"
	filePrefix   = "file:"
	synthPrefix  = "synth:" // a draft choice: a synthetic draft shape
	inprocLabel  = "in-process"
)

// defaultDraftPMin is the draft p-min field's first value: the engine's default.
var defaultDraftPMin = strconv.FormatFloat(engine.DefaultDraftPMin, 'g', -1, 64)

// backends are the Backend choices: the in-process engine, then serving clients.
var backends = []string{"", "openai", "openai-chat", "llamacpp", "tgi"}

// kvTypes are the KV cache choices: the engine's default, then workloads.KVCacheTypes.
var kvTypes = append([]string{""}, workloads.KVCacheTypes...)

// sonnetFile is the sonnet dataset's file offered (vLLM's benchmarks/sonnet.txt, from
// the current folder).
const sonnetFile = "sonnet.txt"

// lengths are Setup's input and output lengths by dataset (random is short, so a run
// on the CPU is quick; the others are serve-bench's defaults); -1: no such field.
var lengths = map[string][2]int{"random": {128, 64}, "sonnet": {550, 150}, "sharegpt": {-1, 0},
	"prefix_repetition": {-1, 128}, "custom": {-1, 256}}

// Model is the Setup screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Keys  KeyMap

	files   []File
	focus   int
	chosen  string // the model row chosen
	shapes  []string
	types   []string
	shape   int
	typ     int
	kind    Kind
	dataset int
	backend int
	kv      int
	// draft is the draft model chosen: "" (none), rowBuiltin, synthPrefix+shape,
	// filePrefix+path or rowPath (the draft path field); draftTyp its synthetic type.
	draft    string
	draftTyp int
	suite    int                        // index into workloads.KernelSuites
	in       map[string]textinput.Model // every text field
	tried    bool                       // enter was pressed: show every error
	errorMsg string
	refused  string // what errorMsg refused: "run" (enter) or "save" (s)
	// Note is the outcome of the last save or open, shown instead of the estimate
	// until the next key.
	Note   string
	prompt *prompt.Model // a profile path being typed
	open   bool          // the prompt opens a profile (else it saves one)
	last   string        // the profile path saved or opened last

	power  Power
	detect func(url string) (string, error)
	// check says why a model file cannot run (nil: it can), asked once per path;
	// plan says what a synthetic model needs (size, free disk), asked once per shape
	// and type.
	check  func(path string) error
	checks map[string]string
	plan   func(shape, typ string) (Plan, error)
	plans  map[[2]string]planned
	// paces are what earlier runs of this session measured, by workload and model:
	// the estimate line's time comes from them.
	paces map[string]Pace
	seq   int       // the URL edit a probe of /v1/models answers
	found DetectMsg // the latest answer for the URL shown
}

// File is a model file Setup offers (main finds them: workloads/discover).
type File struct {
	Name  string // as the place names it: "org/repo/f.gguf", "llama3.2:1b"
	Path  string // the file to open
	Size  int64  // bytes (0: unknown)
	Type  string // "Q4_K - Medium"; "" when unread
	Where string // where it was found: "folder", "llama.cpp", "ollama", …
	Err   string // why it cannot run ("" = it can): shown, and refused on enter
}

// New returns the Setup screen offering files besides the built-in and synthetic models.
func New(t theme.Theme, files []File) Model {
	m := Model{theme: t, Keys: DefaultKeyMap(), files: files, chosen: rowBuiltin, w: 80, h: 22,
		shapes: synth.Shapes(), types: synth.FileTypes(), dataset: slices.Index(workloads.Datasets, "random"),
		in: map[string]textinput.Model{}, checks: map[string]string{}, plans: map[[2]string]planned{}, paces: map[string]Pace{}}
	for f, v := range map[string]string{
		rowPath: "", rowPP: "512", rowTG: "128", rowReps: "5", rowThreads: "0", rowDSPath: "",
		rowPrompts: "100", rowInLen: "128", rowOutLen: "64", rowConc: "8", rowRate: "inf",
		rowURL: "http://127.0.0.1:8000", rowEndpoint: "", rowServed: "", rowMaxSeqs: "0", rowPower: "",
		rowCases: "", rowSeqLen: strconv.Itoa(workloads.DefaultKernelSeqLen), rowHeads: strconv.Itoa(workloads.DefaultKernelHeads),
		rowHeadDim: strconv.Itoa(workloads.DefaultKernelHeadDim), rowBlock: strconv.Itoa(workloads.DefaultKernelBlockSize),
		rowKReps:    strconv.Itoa(workloads.DefaultKernelReps),
		rowBatchSeq: "128", rowDecLen: "8", rowBatch: "1,2,4,8,16,32", rowRuns: "3",
		rowDraftPath: "", rowDraftMax: strconv.Itoa(engine.DefaultDraftMax), rowDraftMin: "0", rowDraftPMin: defaultDraftPMin,
	} {
		m.in[f] = prompt.Input(v)
	}
	for f, v := range throughputDefaults {
		m.in[f] = prompt.Input(v)
	}
	m.shape = max(0, slices.Index(m.shapes, "llama-1b"))
	m.typ = max(0, slices.Index(m.types, "Q4_0"))
	m.draftTyp = max(0, slices.Index(m.types, "Q8_0")) // the pairs' published type
	return m
}

// SetSize sets the area the screen draws in (between header and footer).
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetPower tells Setup the GPU's power-limit range and whether limits can be set.
func (m *Model) SetPower(p Power) { m.power = p }

// Plan is what writing a synthetic model takes (engine/synth's Plan, as main reads
// it): Note says it in a few words ("738.9 MiB to write, 41.2 GiB free", "cached"),
// Fits is false when the disk has not room for it.
type Plan struct {
	Note string
	Fits bool
}

type planned struct {
	p   Plan
	err error
}

// Pace is what a finished run measured, for the time estimate of the next run of the
// same workload and model: prompt and generation tokens per second (bench), requests
// per second (serve-bench, at the concurrency it ran), seconds per case and round
// (kernels: a warmup round and the repetitions, at the same suite and sizes).
type Pace struct {
	PromptTps, GenTps float64
	RequestsPerS      float64
	RoundSeconds      float64
}

func paceKey(c Config) string { return c.Kind.String() + "\x00" + c.modelAndDraft() }

// Learn keeps what a run of c measured; later estimates of the same workload and model
// say how long a run will take.
func (m *Model) Learn(c Config, p Pace) {
	m.paces = maps.Clone(m.paces)
	m.paces[paceKey(c)] = p
}

// duration is the time estimate of c ("" when no earlier run of its workload and
// model says how fast it goes).
func (m Model) duration(c Config) string {
	p, ok := m.paces[paceKey(c)]
	unknown := "time: known after a first run of this model"
	if c.Kind == Kernels {
		unknown = "time: known after a run of this suite and sizes"
	}
	if !ok {
		return unknown
	}
	powers := float64(max(1, len(c.PowerW)))
	var secs float64
	switch {
	case c.Kind == Bench && (c.Prompt == 0 || p.PromptTps > 0) && (c.Gen == 0 || p.GenTps > 0):
		if c.Prompt > 0 {
			secs += float64(c.Prompt) / p.PromptTps
		}
		if c.Gen > 0 {
			secs += float64(c.Gen) / p.GenTps
		}
		secs *= float64(c.Reps+1) * powers
	case c.Kind == Serve && p.RequestsPerS > 0:
		secs = float64(len(c.Concurrency)*len(c.Rate)*c.Prompts) * powers / p.RequestsPerS
	case c.Kind == Kernels && p.RoundSeconds > 0:
		secs = float64(len(KernelCases(c.Kernel))*(c.Kernel.Reps+1)) * powers * p.RoundSeconds
	case c.Kind == Throughput && p.RequestsPerS > 0:
		secs = float64(len(c.ThroughputSpec().Rows())*c.Prompts) / p.RequestsPerS
	default:
		return unknown
	}
	return "~" + durationText(secs) + " at the last run's pace"
}

// durationText says secs as the Results screen says a run's length.
func durationText(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", max(1, d.Milliseconds()))
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// SetCheck sets how Setup checks a model file before a run (a GGUF the engine can
// build: discover.CheckModelFile); nil checks only that the file exists.
func (m *Model) SetCheck(f func(path string) error) { m.check, m.checks = f, map[string]string{} }

// SetPlan sets how Setup learns what a synthetic model needs before it is written.
func (m *Model) SetPlan(f func(shape, typ string) (Plan, error)) {
	m.plan, m.plans = f, map[[2]string]planned{}
}

// fileErr says why path cannot run ("" when it can), asking once per path.
func (m Model) fileErr(path string) string {
	if e, ok := m.checks[path]; ok {
		return e
	}
	e := ""
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		e = "no such file"
		if err == nil {
			e = "a folder, not a model file"
		}
	} else if m.check != nil {
		if err := m.check(path); err != nil {
			e = err.Error()
		}
	}
	m.checks[path] = e
	return e
}

// synthPlan returns the plan of the synthetic model shown, asking once per pair; a
// throughput run writes the shape in BF16 and quantizes the other types from it.
func (m Model) synthPlan() (Plan, bool) {
	if m.kind == Throughput {
		return m.planOf(m.shapes[m.shape], throughputSource)
	}
	return m.planOf(m.shapes[m.shape], m.types[m.typ])
}

// draftPlan returns the plan of the synthetic draft chosen (false: none, or unknown).
func (m Model) draftPlan() (Plan, bool) {
	shape, ok := strings.CutPrefix(m.draft, synthPrefix)
	if !ok {
		return Plan{}, false
	}
	return m.planOf(shape, m.types[m.draftTyp])
}

// planOf returns what writing shape in typ takes, asking once per pair.
func (m Model) planOf(shape, typ string) (Plan, bool) {
	if m.plan == nil {
		return Plan{}, false
	}
	k := [2]string{shape, typ}
	p, ok := m.plans[k]
	if !ok {
		p.p, p.err = m.plan(k[0], k[1])
		m.plans[k] = p
	}
	return p.p, p.err == nil
}

// SetDetect sets how Setup asks an external server for its model (GET /v1/models);
// nil: it does not ask.
func (m *Model) SetDetect(f func(url string) (string, error)) { m.detect = f }

// KernelCases returns the cases a kernels spec runs: its own list, else every case
// of its suite.
func KernelCases(k workloads.KernelSpec) []string {
	if len(k.Cases) > 0 {
		return k.Cases
	}
	return kernelbench.CaseNames(k.Suite)
}

func (m Model) modelRows() []string {
	if m.remote() || m.kind == Kernels {
		return nil // the server holds the model; kernels run on no model
	}
	rows := []string{rowBuiltin, rowShape, rowType}
	if m.kind == Throughput {
		rows = rows[:2] // the weights types row gives the types
	}
	for _, f := range m.files {
		rows = append(rows, filePrefix+f.Path)
	}
	rows = append(rows, rowPath)
	if m.kind != Serve {
		return rows // only the serving engine speculates
	}
	rows = append(rows, rowDraft)
	switch {
	case m.draft == "":
		return rows
	case strings.HasPrefix(m.draft, synthPrefix):
		rows = append(rows, rowDraftType)
	case m.draft == rowPath:
		rows = append(rows, rowDraftPath)
	}
	return append(rows, rowDraftMax, rowDraftMin, rowDraftPMin)
}

// draftChoices are what the draft model row cycles through: none, the built-in model,
// the synthetic pairs' draft shapes, the files found, a path.
func (m Model) draftChoices() []string {
	out := []string{"", rowBuiltin}
	for _, s := range DraftShapes() {
		out = append(out, synthPrefix+s)
	}
	for _, f := range m.files {
		out = append(out, filePrefix+f.Path)
	}
	return append(out, rowPath)
}

// DraftShapes are the synthetic shapes Setup offers as a draft: the pairs' drafts
// (spec-tiny-draft, spec-base-draft).
func DraftShapes() []string {
	var out []string
	for _, s := range synth.Shapes() {
		if sh, err := synth.Lookup(s); err == nil && sh.DraftOf != "" {
			out = append(out, s)
		}
	}
	return out
}

// draftModel is the draft chosen as a model reference (zero: none).
func (m Model) draftModel() workloads.BenchModel {
	switch d := m.draft; {
	case d == "":
		return workloads.BenchModel{}
	case d == rowBuiltin:
		return workloads.BenchModel{Path: Builtin}
	case d == rowPath:
		return workloads.BenchModel{Path: discover.ExpandPath(m.text(rowDraftPath))}
	case strings.HasPrefix(d, synthPrefix):
		return workloads.BenchModel{Shape: strings.TrimPrefix(d, synthPrefix), Type: m.types[m.draftTyp]}
	}
	return workloads.BenchModel{Path: strings.TrimPrefix(m.draft, filePrefix)}
}

func (m Model) remote() bool { return m.kind == Serve && backends[m.backend] != "" }

func (m Model) datasetName() string { return workloads.Datasets[m.dataset] }

func (m Model) suiteName() string { return workloads.KernelSuites[m.suite] }

func (m Model) workRows() []string {
	switch m.kind {
	case Bench:
		return []string{rowKind, rowPP, rowTG, rowReps, rowThreads, rowKV, rowPower}
	case Kernels:
		rows := []string{rowKind, rowSuite, rowCases}
		if m.suiteName() == workloads.SuiteAttentionMasks { // paged-attention's cases have their own shapes
			rows = append(rows, rowSeqLen, rowHeads, rowHeadDim, rowBlock)
		}
		return append(rows, rowThreads, rowKReps, rowPower)
	}
	if m.kind == Batch {
		return []string{rowKind, rowBatchSeq, rowDecLen, rowBatch, rowRuns, rowThreads, rowKV}
	}
	if m.kind == Throughput {
		return throughputRows
	}
	rows := []string{rowKind, rowDataset}
	ds := m.datasetName()
	if workloads.DatasetNeedsFile(ds) {
		rows = append(rows, rowDSPath)
	}
	rows = append(rows, rowPrompts)
	if lengths[ds][0] >= 0 {
		rows = append(rows, rowInLen)
	}
	rows = append(rows, rowOutLen, rowConc, rowRate, rowBackend)
	if m.remote() {
		rows = append(rows, rowURL, rowEndpoint, rowServed)
	} else {
		rows = append(rows, rowThreads, rowKV, rowMaxSeqs)
	}
	return append(rows, rowPower)
}

func (m Model) rows() []string { return append(m.modelRows(), m.workRows()...) }

func (m Model) focused() string { return m.rows()[min(m.focus, len(m.rows())-1)] }

func (m Model) isText(f string) bool { _, ok := m.in[f]; return ok }

// Capturing reports whether a text field has the focus, so the root passes letters
// (q included) and a paste to it rather than treating them as global keys.
func (m Model) Capturing() bool { return m.prompt != nil || m.isText(m.focused()) }

func (m Model) text(f string) string { return strings.TrimSpace(m.in[f].Value()) }

// num is a whole-number field's value (0 when it is not one: fieldErr says so).
func (m Model) num(f string) int { n, _ := strconv.Atoi(m.text(f)); return n }

func (m *Model) setText(f, v string) {
	in := m.in[f]
	in.SetValue(v)
	in.CursorEnd()
	m.in[f] = in
}

// DetectMsg carries a probe of an external server's /v1/models: Pending is the
// pause after an edit of the URL (the probe starts when no newer edit came), else
// the answer (Model, or Err).
type DetectMsg struct {
	Seq     int
	URL     string
	Pending bool
	Model   string
	Err     error
}

// Update handles a key, a paste and the answers of a /v1/models probe.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case DetectMsg:
		return m.detected(msg)
	case tea.PasteMsg:
		if m.prompt != nil {
			return m.promptKey(msg)
		}
		return m.edit(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	m.Note = ""
	if m.prompt != nil {
		return m.promptKey(k)
	}
	switch {
	case key.Matches(k, m.Keys.Save) && !m.Capturing():
		m.tried = true
		c, err := m.Config()
		if err != nil {
			m.errorMsg, m.refused = err.Error(), "save"
			return m, nil
		}
		m.errorMsg = ""
		path := m.last
		if path == "" {
			path = "." + string(filepath.Separator) + strings.Trim(unsafeName.ReplaceAllString(c.Kind.String()+"-"+c.ModelName(), "-"), "-") + ".yaml"
		}
		m.prompt, m.open = prompt.New("save profile to", path), false
	case key.Matches(k, m.Keys.Open) && !m.Capturing():
		m.prompt, m.open = prompt.New("open profile", m.last), true
	case key.Matches(k, m.Keys.Up):
		m.move(-1)
	case key.Matches(k, m.Keys.Down):
		m.move(1)
	case key.Matches(k, m.Keys.Pick) && !m.Capturing():
		m.pick()
	case key.Matches(k, m.Keys.Run):
		m.tried = true
		c, err := m.Config()
		if err != nil {
			m.errorMsg, m.refused = err.Error(), "run"
			return m, nil
		}
		m.errorMsg = ""
		return m, runCmd(c)
	case m.Capturing():
		return m.edit(k)
	case key.Matches(k, m.Keys.Left):
		return m.change(-1)
	case key.Matches(k, m.Keys.Right):
		return m.change(1)
	}
	return m, nil
}

// edit passes a key or a paste to the focused text field.
func (m Model) edit(msg tea.Msg) (Model, tea.Cmd) {
	f := m.focused()
	in, ok := m.in[f]
	if !ok {
		return m, nil
	}
	before := in.Value()
	in, _ = in.Update(msg)
	m.in = maps.Clone(m.in)
	m.in[f] = in
	if in.Value() == before {
		return m, nil
	}
	switch f {
	case rowPath:
		m.chosen = rowPath
	case rowURL:
		return m, m.probe()
	}
	return m, nil
}

// probe asks for the URL's /v1/models after a pause (a newer edit supersedes it).
func (m *Model) probe() tea.Cmd {
	m.seq++
	m.found = DetectMsg{}
	if m.detect == nil || m.fieldErr(rowURL) != "" {
		return nil
	}
	msg := DetectMsg{Seq: m.seq, URL: m.text(rowURL), Pending: true}
	return tea.Tick(400*time.Millisecond, func(time.Time) tea.Msg { return msg })
}

func (m Model) detected(msg DetectMsg) (Model, tea.Cmd) {
	if msg.Seq != m.seq || msg.URL != m.text(rowURL) || m.detect == nil {
		return m, nil // an older URL's
	}
	if msg.Pending {
		detect := m.detect
		return m, func() tea.Msg {
			model, err := detect(msg.URL)
			return DetectMsg{Seq: msg.Seq, URL: msg.URL, Model: model, Err: err}
		}
	}
	m.found = msg
	return m, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// promptKey edits the profile path; enter hands it to the root (SaveMsg, OpenMsg).
func (m Model) promptKey(msg tea.Msg) (Model, tea.Cmd) {
	p := *m.prompt
	m.prompt = &p
	switch p.Update(msg) {
	case prompt.Cancelled:
		m.prompt, m.Note = nil, "cancelled"
	case prompt.Submitted:
		path := discover.ExpandPath(p.Text)
		m.prompt, m.last = nil, path
		if m.open {
			return m, func() tea.Msg { return OpenMsg{Path: path} }
		}
		c, err := m.Config()
		if err != nil {
			m.errorMsg, m.refused = err.Error(), "save"
			return m, nil
		}
		return m, func() tea.Msg { return SaveMsg{Config: c, Path: path} }
	}
	return m, nil
}

// FooterNow returns the bindings the footer shows now: a prompt's while one is
// open; a text field's editing keys while one has the focus; else space only where
// it would pick another model, s/o only where they do not type into a field.
func (m Model) FooterNow() []key.Binding {
	switch {
	case m.prompt != nil && m.open:
		return prompt.Footer("open")
	case m.prompt != nil:
		return prompt.Footer("write")
	case m.Capturing():
		return append([]key.Binding{m.Keys.Up, m.Keys.Run}, prompt.FieldKeys()...)
	}
	var out []key.Binding
	for _, b := range m.Keys.Footer() {
		switch {
		case b.Help() == m.Keys.Pick.Help() && !m.canPick():
		default:
			out = append(out, b)
		}
	}
	return out
}

// canPick reports whether space would choose another model than the one chosen.
func (m Model) canPick() bool {
	switch f := m.focused(); {
	case f == rowShape || f == rowType:
		return m.chosen != rowShape
	case f == rowBuiltin || strings.HasPrefix(f, filePrefix):
		return m.chosen != f
	}
	return false
}

// SetConfig shows c on the screen, as if it had been set up by hand; the cursor
// stays on its row where c's screen has it (rows above may come or go).
func (m *Model) SetConfig(c Config) {
	was := m.focused()
	m.kind, m.tried, m.errorMsg = c.Kind, false, ""
	m.in = maps.Clone(m.in)
	switch {
	case c.Model.Path == Builtin:
		m.chosen = rowBuiltin
	case c.Model.Shape != "":
		m.chosen = rowShape
		m.shape = max(0, slices.Index(m.shapes, c.Model.Shape))
		m.typ = max(0, slices.Index(m.types, c.Model.Type))
	case slices.ContainsFunc(m.files, func(f File) bool { return f.Path == c.Model.Path }):
		m.chosen = filePrefix + c.Model.Path
	default:
		m.chosen = rowPath
		m.setText(rowPath, c.Model.Path)
	}
	m.setText(rowThreads, strconv.Itoa(c.Threads))
	m.setDraft(c)
	m.kv = max(0, slices.Index(kvTypes, c.KVType))
	m.setText(rowPower, joinFloats(c.PowerW))
	switch c.Kind {
	case Kernels:
		k := c.Kernel.WithDefaults()
		m.suite = max(0, slices.Index(workloads.KernelSuites, k.Suite))
		m.setText(rowCases, strings.Join(k.Cases, ","))
		m.setText(rowSeqLen, strconv.Itoa(k.SeqLen))
		m.setText(rowHeads, strconv.Itoa(k.Heads))
		m.setText(rowHeadDim, strconv.Itoa(k.HeadDim))
		m.setText(rowBlock, strconv.Itoa(k.BlockSize))
		m.setText(rowThreads, strconv.Itoa(k.Threads))
		m.setText(rowKReps, strconv.Itoa(k.Reps))
	case Bench:
		m.setText(rowPP, strconv.Itoa(c.Prompt))
		m.setText(rowTG, strconv.Itoa(c.Gen))
		m.setText(rowReps, strconv.Itoa(c.Reps))
	case Throughput:
		m.setThroughput(c)
	case Batch:
		m.setText(rowBatchSeq, strconv.Itoa(c.SequenceLength))
		m.setText(rowDecLen, strconv.Itoa(c.DecodeLength))
		m.setText(rowBatch, joinInts(c.BatchSizes))
		m.setText(rowRuns, strconv.Itoa(c.Reps))
	default:
		m.dataset = max(0, slices.Index(workloads.Datasets, c.Dataset))
		m.setText(rowDSPath, c.DatasetPath)
		m.setText(rowPrompts, strconv.Itoa(c.Prompts))
		m.setText(rowInLen, strconv.Itoa(c.InputLen))
		m.setText(rowOutLen, strconv.Itoa(c.OutputLen))
		m.setText(rowConc, joinInts(c.Concurrency))
		m.setText(rowRate, joinFloats(c.Rate))
		m.backend = max(0, slices.Index(backends, c.Backend))
		if c.Backend != "" {
			m.setText(rowURL, c.URL)
			m.setText(rowEndpoint, c.Endpoint)
			m.setText(rowServed, c.ServedModel)
		}
		m.setText(rowMaxSeqs, strconv.Itoa(c.MaxNumSeqs))
	}
	if i := slices.Index(m.rows(), was); i >= 0 {
		m.focus = i
	}
	m.focus = min(m.focus, len(m.rows())-1)
}

// setDraft shows c's draft model and its settings (no draft: the settings at the
// engine's defaults, as a new Setup shows them).
func (m *Model) setDraft(c Config) {
	most, least, pmin, path := strconv.Itoa(engine.DefaultDraftMax), "0", defaultDraftPMin, ""
	switch d := c.Draft; {
	case d == workloads.BenchModel{}:
		m.draft = ""
	case d.Path == Builtin:
		m.draft = rowBuiltin
	case d.Shape != "":
		m.draft = synthPrefix + d.Shape
		m.draftTyp = max(0, slices.Index(m.types, d.Type))
	case slices.ContainsFunc(m.files, func(f File) bool { return f.Path == d.Path }):
		m.draft = filePrefix + d.Path
	default:
		m.draft, path = rowPath, d.Path
	}
	if m.draft != "" {
		if c.DraftMax > 0 {
			most = strconv.Itoa(c.DraftMax)
		}
		least = strconv.Itoa(c.DraftMin)
		switch {
		case c.DraftPMin < 0:
			pmin = "0" // never stop early
		case c.DraftPMin > 0:
			pmin = strconv.FormatFloat(c.DraftPMin, 'g', -1, 64)
		}
	}
	for f, v := range map[string]string{rowDraftMax: most, rowDraftMin: least, rowDraftPMin: pmin, rowDraftPath: path} {
		m.setText(f, v)
	}
}

func (m *Model) move(d int) { m.focus = min(max(m.focus+d, 0), len(m.rows())-1) }

// pick chooses the focused model row.
func (m *Model) pick() {
	switch f := m.focused(); {
	case f == rowShape || f == rowType:
		m.chosen = rowShape
	case f == rowBuiltin || f == rowPath || strings.HasPrefix(f, filePrefix):
		m.chosen = f
	}
}

func cycle(i, d, n int) int { return ((i+d)%n + n) % n }

// change turns the choice of the focused row (←→), keeping the focus on it.
func (m Model) change(d int) (Model, tea.Cmd) {
	f := m.focused()
	switch f {
	case rowShape:
		m.shape = cycle(m.shape, d, len(m.shapes))
	case rowType:
		m.typ = cycle(m.typ, d, len(m.types))
	case rowKind:
		m.kind = Kind(cycle(int(m.kind), d, kinds))
	case rowSuite:
		m.suite = cycle(m.suite, d, len(workloads.KernelSuites))
		m.in = maps.Clone(m.in)
		m.setText(rowCases, "") // one suite's cases are no other's
	case rowDataset:
		m.dataset = cycle(m.dataset, d, len(workloads.Datasets))
		m.in = maps.Clone(m.in)
		l := lengths[m.datasetName()]
		if l[0] >= 0 {
			m.setText(rowInLen, strconv.Itoa(l[0]))
		}
		m.setText(rowOutLen, strconv.Itoa(l[1]))
		switch p := m.text(rowDSPath); {
		case m.datasetName() == "sonnet" && p == "":
			m.setText(rowDSPath, sonnetFile)
		case m.datasetName() != "sonnet" && p == sonnetFile:
			m.setText(rowDSPath, "") // sonnet's file is no other dataset's
		}
	case rowBackend:
		m.backend = cycle(m.backend, d, len(backends))
		m.in = maps.Clone(m.in)
		m.setText(rowEndpoint, serving.DefaultEndpoint(backends[m.backend])) // each backend's own path
	case rowKV:
		m.kv = cycle(m.kv, d, len(kvTypes))
	case rowDraft:
		ch := m.draftChoices()
		m.draft = ch[cycle(slices.Index(ch, m.draft), d, len(ch))]
	case rowDraftType:
		m.draftTyp = cycle(m.draftTyp, d, len(m.types))
	default:
		return m, nil
	}
	// the rows above may have come or gone: keep the focus on the row changed
	m.focus = max(0, slices.Index(m.rows(), f))
	if f == rowBackend && m.remote() {
		return m, m.probe()
	}
	return m, nil
}

// splitList returns the non-empty items of a comma list.
func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseInts reads a comma list of whole numbers ≥ lo ("1,4,16").
func parseInts(s string, lo int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo {
			return nil, fmt.Errorf("whole numbers ≥ %d, comma-separated", lo)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseRates reads a comma list of rates (requests/s > 0, or inf).
func parseRates(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "inf" {
			out = append(out, math.Inf(1))
			continue
		}
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, errors.New("requests/s > 0 or inf, comma-separated")
		}
		out = append(out, r)
	}
	return out, nil
}

// parseWatts reads the power-limit list: empty (leave the limit), or watts.
func (m Model) parseWatts(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		w, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || w <= 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return nil, errors.New("watts, comma-separated (empty: leave the limit)")
		}
		p := m.power
		if p.MaxW > 0 && (w < p.MinW || w > p.MaxW) {
			return nil, fmt.Errorf("%g W is outside the GPU's %g–%g W", w, p.MinW, p.MaxW)
		}
		out = append(out, w)
	}
	if m.power.Refused != "" {
		return nil, errors.New("cannot set power limits: " + m.power.Refused)
	}
	return out, nil
}

// fieldErr returns what is wrong with a field's value ("" when fine).
func (m Model) fieldErr(f string) string {
	v := m.text(f)
	atLeast := func(lo int) string {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo {
			return fmt.Sprintf("a whole number ≥ %d", lo)
		}
		return ""
	}
	errStr := func(err error) string {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	if e, ok := m.throughputFieldErr(f); ok {
		return e
	}
	switch f {
	case rowPP, rowTG, rowThreads, rowMaxSeqs, rowOutLen:
		return atLeast(0)
	case rowReps, rowPrompts, rowInLen, rowSeqLen, rowHeads, rowHeadDim, rowBlock, rowKReps, rowBatchSeq, rowRuns:
		return atLeast(1)
	case rowCases:
		names := kernelbench.CaseNames(m.suiteName())
		for _, c := range splitList(v) {
			if !slices.Contains(names, c) {
				return fmt.Sprintf("%q is not a case of %s", c, m.suiteName())
			}
		}
	case rowDecLen:
		return atLeast(2)
	case rowBatch:
		_, err := parseInts(v, 1)
		return errStr(err)
	case rowConc:
		_, err := parseInts(v, 1)
		return errStr(err)
	case rowRate:
		_, err := parseRates(v)
		return errStr(err)
	case rowPower:
		_, err := m.parseWatts(v)
		return errStr(err)
	case rowPath:
		if m.chosen != rowPath {
			return ""
		}
		if v == "" {
			return "type or paste a path to a .gguf file"
		}
		return m.fileErr(discover.ExpandPath(v))
	case rowType:
		if p, ok := m.synthPlan(); ok && m.chosen == rowShape && !p.Fits {
			return p.Note
		}
	case rowDSPath:
		if v == "" {
			return "the " + m.datasetName() + " dataset reads a file: type or paste its path"
		}
		if st, err := os.Stat(discover.ExpandPath(v)); err != nil || st.IsDir() {
			return "no such file"
		}
	default:
		if path, ok := strings.CutPrefix(f, filePrefix); ok && m.chosen == f {
			return m.fileErr(path)
		}
		return ""
	case rowDraft:
		if path, ok := strings.CutPrefix(m.draft, filePrefix); ok {
			return m.fileErr(path)
		}
	case rowDraftPath:
		if v == "" {
			return "type or paste a .gguf path"
		}
		return m.fileErr(discover.ExpandPath(v))
	case rowDraftType:
		if p, ok := m.draftPlan(); ok && !p.Fits {
			return p.Note
		}
	case rowDraftMax:
		return atLeast(1)
	case rowDraftMin:
		if e := atLeast(0); e != "" {
			return e
		}
		if n, most := m.num(rowDraftMin), m.num(rowDraftMax); most >= 1 && n > most {
			return fmt.Sprintf("at most draft max (%d)", most)
		}
	case rowDraftPMin:
		if p, err := strconv.ParseFloat(v, 64); err != nil || !(p >= 0 && p <= 1) {
			return "a probability from 0 to 1 (0: never stop early)"
		}
	case rowEndpoint:
		if !strings.HasPrefix(v, "/") {
			return "a path on the server, such as " + serving.DefaultEndpoint(backends[m.backend])
		}
	case rowURL:
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "an http:// or https:// URL"
		}
	}
	return ""
}

// Config returns the run set up, or the first thing wrong with it.
func (m Model) Config() (Config, error) {
	for _, f := range m.rows() {
		if e := m.fieldErr(f); e != "" {
			return Config{}, fmt.Errorf("%s: %s", f, e)
		}
	}
	num := m.num
	c := Config{Kind: m.kind, Prompt: num(rowPP), Gen: num(rowTG), Reps: num(rowReps), Threads: num(rowThreads),
		KVType: kvTypes[m.kv], Dataset: m.datasetName(), Prompts: num(rowPrompts), OutputLen: num(rowOutLen)}
	c.PowerW, _ = m.parseWatts(m.text(rowPower))
	switch {
	case m.chosen == rowBuiltin:
		c.Model.Path = Builtin
	case m.chosen == rowShape:
		c.Model.Shape, c.Model.Type = m.shapes[m.shape], m.types[m.typ]
	case m.chosen == rowPath:
		c.Model.Path = discover.ExpandPath(m.text(rowPath))
	default:
		c.Model.Path = strings.TrimPrefix(m.chosen, filePrefix)
	}
	if c.Kind == Kernels {
		return m.kernelConfig(c)
	}
	if c.Kind == Throughput {
		return m.throughputConfig(c)
	}
	if c.Kind == Batch {
		c.Prompt, c.Gen, c.Reps, c.PowerW = 0, 0, num(rowRuns), nil
		c.SequenceLength, c.DecodeLength = num(rowBatchSeq), num(rowDecLen)
		c.BatchSizes, _ = parseInts(m.text(rowBatch), 1)
		if err := c.BatchSpec().WithDefaults().Validate(); err != nil {
			return Config{}, err
		}
		return c, nil
	}
	if c.Kind == Bench {
		if c.Prompt == 0 && c.Gen == 0 {
			return Config{}, errors.New("pp and tg are both 0: nothing to run")
		}
		if err := micro.Validate(c.BenchSpec()); err != nil {
			return Config{}, err
		}
		return c, nil
	}
	c.Prompt, c.Gen, c.Reps = 0, 0, 0
	if lengths[c.Dataset][0] >= 0 {
		c.InputLen = num(rowInLen)
	}
	if workloads.DatasetNeedsFile(c.Dataset) {
		c.DatasetPath = discover.ExpandPath(m.text(rowDSPath))
	}
	c.Concurrency, _ = parseInts(m.text(rowConc), 1)
	c.Rate, _ = parseRates(m.text(rowRate))
	if m.remote() {
		c.Backend, c.URL, c.Endpoint, c.ServedModel = backends[m.backend], m.text(rowURL), m.text(rowEndpoint), m.text(rowServed)
		c.Model, c.Threads, c.KVType = workloads.BenchModel{}, 0, ""
	} else {
		c.MaxNumSeqs = num(rowMaxSeqs)
		if c.Draft = m.draftModel(); m.draft != "" {
			c.DraftMax, c.DraftMin = num(rowDraftMax), num(rowDraftMin)
			if c.DraftPMin, _ = strconv.ParseFloat(m.text(rowDraftPMin), 64); c.DraftPMin == 0 {
				c.DraftPMin = -1 // never stop early: the engine reads 0 as its default
			}
		}
	}
	return c, nil
}

// kernelConfig fills c (a Kernels config with its power limits) from the kernel
// rows: the spec of the suite shown, sizes only for attention-masks (defaults filled,
// as a profile writes them).
func (m Model) kernelConfig(c Config) (Config, error) {
	num := m.num
	k := workloads.KernelSpec{Suite: m.suiteName(), Cases: splitList(m.text(rowCases)), Threads: num(rowThreads), Reps: num(rowKReps)}
	if k.Suite == workloads.SuiteAttentionMasks {
		k.SeqLen, k.Heads, k.HeadDim, k.BlockSize = num(rowSeqLen), num(rowHeads), num(rowHeadDim), num(rowBlock)
		k = k.WithDefaults()
	}
	if err := kernelbench.Validate(k); err != nil {
		return Config{}, err
	}
	return Config{Kind: Kernels, Kernel: k, PowerW: c.PowerW}, nil
}

// Estimate is the line under the panels: what the run will do, how many tokens it
// moves and the memory it needs (model file and KV cache, where they are known).
func (m Model) Estimate() string {
	c, err := m.Config()
	if err != nil {
		return "✗ " + err.Error()
	}
	powers := ""
	if n := len(c.PowerW); n > 0 {
		powers = fmt.Sprintf(" × %d power limits", n)
	}
	if c.Kind == Kernels {
		threads := "all cores"
		if t := c.Kernel.Threads; t > 0 {
			threads = plural(t, "thread")
		}
		return fmt.Sprintf("Estimated: %s × %s (after a warmup each)%s · on the CPU, %s, no model · %s",
			plural(len(KernelCases(c.Kernel)), "case"), plural(c.Kernel.Reps, "rep"), powers, threads, m.duration(c))
	}
	if c.Kind == Throughput {
		return m.throughputEstimate(c)
	}
	mem := m.memory(c)
	if p, ok := m.synthPlan(); ok && c.Model.Shape != "" {
		mem += " · " + c.Model.Shape + " " + c.Model.Type + ": " + p.Note
	}
	if p, ok := m.draftPlan(); ok && c.Draft.Shape != "" {
		mem += " · " + c.Draft.Shape + " " + c.Draft.Type + ": " + p.Note
	}
	mem = " · " + m.duration(c) + mem
	if c.Kind == Batch {
		var tokens int64
		for _, b := range c.BatchSizes {
			tokens += int64(b) * int64(c.SequenceLength+c.DecodeLength) * int64(c.Reps+1)
		}
		return fmt.Sprintf("Estimated: %s × %s (after a warmup each) · %s tokens%s",
			plural(len(c.BatchSizes), "batch size"), plural(c.Reps, "run"), humanCount(tokens), mem)
	}
	if c.Kind == Bench {
		n := len(micro.Expand(c.BenchSpec().WithDefaults()))
		tokens := int64(n) * int64(c.Reps+1) * int64(c.Prompt+c.Gen) * int64(max(1, len(c.PowerW)))
		return fmt.Sprintf("Estimated: %s × %s (after a warmup each)%s · %s tokens%s", plural(n, "test"), plural(c.Reps, "rep"),
			powers, humanCount(tokens), mem)
	}
	points := len(c.Concurrency) * len(c.Rate)
	where := "in-process engine"
	if c.Remote() {
		where = c.URL
	}
	s := fmt.Sprintf("Estimated: %s × %s%s against %s", plural(points, "point"), plural(c.Prompts, "request"), powers, where)
	if in := c.InputLen; in > 0 || c.Dataset == "random" {
		tokens := int64(points) * int64(c.Prompts) * int64(in+c.OutputLen) * int64(max(1, len(c.PowerW)))
		s += " · " + humanCount(tokens) + " tokens"
	}
	return s + mem
}

// memory is " · needs ~X" for a local model: the file (the synthetic file's exact
// size) and, for a synthetic shape, its KV cache at the longest context the run uses;
// a draft model's weights and KV cache (its pool mirrors the model's) are added in,
// and then said apart (" · the draft Y of it").
func (m Model) memory(c Config) string {
	if c.Remote() {
		return ""
	}
	ctx, seqs := c.Prompt+c.Gen, 1
	switch c.Kind {
	case Serve:
		ctx, seqs = max(c.InputLen, 1024)+c.OutputLen, slices.Max(c.Concurrency)
	case Batch:
		ctx, seqs = c.SequenceLength+c.DecodeLength, slices.Max(c.BatchSizes)
	}
	f, ok := footprint(c.Model, c.KVType, ctx, seqs)
	if !ok {
		return ""
	}
	var d modelBytes
	if c.Draft != (workloads.BenchModel{}) {
		if d, ok = footprint(c.Draft, c.KVType, ctx, seqs); !ok {
			return ""
		}
	}
	s := " · needs ~" + human(f.weights+f.kv+d.weights+d.kv)
	switch {
	case f.kvUnknown || d.kvUnknown:
		s += " + KV cache"
	case f.kv+d.kv > 0:
		s += " (KV " + human(f.kv+d.kv) + ")"
	}
	if c.Draft != (workloads.BenchModel{}) {
		s += " · the draft " + human(d.weights+d.kv) + " of it"
		if d.kv > 0 {
			s += " (KV " + human(d.kv) + ")"
		}
	}
	return s
}

// modelBytes is what a local model takes in memory: its weights (a file's size) and,
// for a synthetic shape, its KV cache; kvUnknown where the KV cache is not known
// before the model is read (a file).
type modelBytes struct {
	weights, kv int64
	kvUnknown   bool
}

// footprint is what mod takes with a KV cache of kvType ("" = f16) holding ctx
// positions for seqs sequences (ok false: unknown, as for a file that is not there).
func footprint(mod workloads.BenchModel, kvType string, ctx, seqs int) (modelBytes, bool) {
	switch {
	case mod.Path == Builtin:
		return modelBytes{weights: int64(len(builtin.Stories260K))}, true
	case mod.Shape != "":
		spec, err := synth.NewSpec(mod.Shape, mod.Type, 0)
		if err != nil {
			return modelBytes{}, false
		}
		size, err := spec.FileSize()
		if err != nil {
			return modelBytes{}, false
		}
		elt := map[string]int64{"f32": 4, "q8_0": 1}[kvType]
		if elt == 0 {
			elt = 2
		}
		sh := spec.Shape
		hd := sh.HeadDim
		if hd == 0 {
			hd = sh.Embd / sh.Heads
		}
		return modelBytes{weights: size, kv: 2 * int64(sh.Layers) * int64(sh.HeadsKV) * int64(hd) * elt * int64(ctx) * int64(seqs)}, true
	}
	st, err := os.Stat(mod.Path)
	if err != nil {
		return modelBytes{}, false
	}
	return modelBytes{weights: st.Size(), kvUnknown: true}, true
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func humanCount(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
}

func (m Model) line(f string, radio bool, label, value string) string {
	t := m.theme
	cur := "  "
	if m.focused() == f {
		cur = "> "
	}
	mark := ""
	if radio {
		mark = "( ) "
		if m.chosen == f || (f == rowShape && m.chosen == rowShape) {
			mark = t.Selected.Render("(•)") + " "
		}
	}
	s := cur + mark + label + value
	if e := m.shownErr(f); e != "" {
		s += "  " + t.Error.Render("✗ "+e)
	}
	if m.focused() == f {
		return t.Cursor.Render(s)
	}
	return s
}

// shownErr is what is wrong with row f where its row says so: once enter was
// pressed, or while the cursor is on it (a path, whenever it is the model or the
// draft).
func (m Model) shownErr(f string) string {
	if m.tried || m.focused() == f || f == rowPath || f == rowDraftPath {
		return m.fieldErr(f) // the path's is "" unless it is the model
	}
	return ""
}

func choice(s string) string { return "◂ " + s + " ▸" }

// fieldIn is a field's text in at most w cells (a long path scrolls, never cut).
func (m Model) fieldIn(f string, w int) string { return prompt.FieldIn(m.in[f], m.focused() == f, w) }

func (m Model) modelPanel(w, h int) string {
	var lines []string
	shape, _ := synth.Lookup(m.shapes[m.shape])
	for _, r := range m.modelRows() {
		switch {
		case r == rowBuiltin:
			lines = append(lines, m.line(r, true, builtin.Name+" (built-in)", "  "+m.theme.Dim.Render(human(int64(len(builtin.Stories260K))))))
		case r == rowShape:
			l := "synthetic " + choice(m.shapes[m.shape])
			if panel.Width(l+shape.Description)+10 <= w { // the description is decoration: dropped, not cut
				l += "  " + m.theme.Dim.Render(shape.Description)
			}
			lines = append(lines, m.line(r, true, "", l))
		case r == rowType:
			label := "    type      "
			lines = append(lines, m.line(r, false, label, choice(m.types[m.typ])+m.synthSize(m.shapes[m.shape], m.types[m.typ], label, w)))
		case r == rowPath:
			lines = append(lines, m.line(r, true, "path: ", m.fieldIn(r, w-2-2-4-6-1)))
		case r == rowDraft:
			lines = append(lines, m.draftLine(w))
		case r == rowDraftType:
			label := fmt.Sprintf("%-13s", r)
			shape := strings.TrimPrefix(m.draft, synthPrefix)
			lines = append(lines, m.line(r, false, label, choice(m.types[m.draftTyp])+m.synthSize(shape, m.types[m.draftTyp], label, w)))
		case r == rowDraftPath: // its error says what it wants (as the model's path)
			lines = append(lines, m.textLine(r, w))
		case r == rowDraftMax:
			lines = append(lines, m.textLine(r, w, "most tokens drafted a step", "most a step"))
		case r == rowDraftMin:
			lines = append(lines, m.textLine(r, w, "fewest, whatever its confidence", "fewest a step"))
		case r == rowDraftPMin:
			lines = append(lines, m.textLine(r, w, "stop below this top probability; 0 = never", "0 = never stop early"))
		default:
			f := m.file(strings.TrimPrefix(r, filePrefix))
			lines = append(lines, m.line(r, true, f.Name, "  "+m.theme.Dim.Render(f.info())))
		}
	}
	return panel.Box(m.theme, "Model", strings.Join(lines, "\n"), w, h)
}

// file is the file found at path.
func (m Model) file(path string) File {
	return m.files[slices.IndexFunc(m.files, func(f File) bool { return f.Path == path })]
}

// info is what Setup says of a file found: size, where, type, why it cannot run.
func (f File) info() string {
	var info []string
	if f.Size > 0 {
		info = append(info, human(f.Size))
	}
	if f.Where != "" { // where before the type: a narrow screen drops from the end
		info = append(info, f.Where)
	}
	if f.Type != "" {
		info = append(info, f.Type)
	}
	if f.Err != "" {
		info = append(info, "✗ "+f.Err)
	}
	return strings.Join(info, " · ")
}

// synthSize is what a synthetic model's type row says after its choice: the file's
// size, or (where the row has room in w columns) the size and the free disk, before
// anything is written (the estimate line says it too, where it is never cut).
func (m Model) synthSize(shape, typ, label string, w int) string {
	size := ""
	if spec, err := synth.NewSpec(shape, typ, 0); err == nil {
		if n, err := spec.FileSize(); err == nil {
			size = human(n)
		}
	}
	if p, ok := m.planOf(shape, typ); ok && panel.Width("  > "+label+choice(typ)+"  "+p.Note) <= w-2 {
		size = p.Note
	}
	if size == "" {
		return ""
	}
	return "  " + m.theme.Dim.Render(size)
}

// draftLine is the draft model row: the draft chosen and what it is, where that fits.
func (m Model) draftLine(w int) string {
	label := fmt.Sprintf("%-13s", rowDraft)
	name, info := "none", "speculative decoding"
	switch d := m.draft; {
	case d == rowBuiltin:
		name, info = builtin.Name+" (built-in)", human(int64(len(builtin.Stories260K)))
	case d == rowPath:
		name, info = "path", ""
	case strings.HasPrefix(d, synthPrefix):
		name = strings.TrimPrefix(d, synthPrefix)
		if sh, err := synth.Lookup(name); err == nil {
			info = "synthetic, draft of " + sh.DraftOf
		}
	case strings.HasPrefix(d, filePrefix):
		f := m.file(strings.TrimPrefix(d, filePrefix))
		name, info = f.Name, f.info()
	}
	v := choice(name)
	if info != "" && panel.Width("  "+label+v+"  "+info) <= w-2 { // dropped, not cut
		v += "  " + m.theme.Dim.Render(info)
	}
	return m.line(rowDraft, false, label, v)
}

// textLine is a text field's row: its name, its value and the first of hints that
// fits in w columns with the row's error (a hint is dropped, not cut).
func (m Model) textLine(r string, w int, hints ...string) string {
	label := fmt.Sprintf("%-13s", r)
	v := fmt.Sprintf("%-6s ", m.fieldIn(r, w-2-2-13-1))
	e := ""
	if s := m.shownErr(r); s != "" {
		e = "  ✗ " + s // the error before the hint
	}
	for _, h := range hints {
		if panel.Width("  "+label+v+h+e) <= w-2 {
			v += m.theme.Dim.Render(h)
			break
		}
	}
	return m.line(r, false, label, v)
}

// powerHint says what the device allows beside the power field.
func (m Model) powerHint() string {
	p := m.power
	switch {
	case p.Refused != "":
		return "— " + p.Refused
	case p.MaxW > 0:
		s := fmt.Sprintf("%g–%g W", p.MinW, p.MaxW)
		if p.DefaultW > 0 {
			s += fmt.Sprintf(", default %g", p.DefaultW)
		}
		if p.CurrentW > 0 && p.CurrentW != p.DefaultW {
			s += fmt.Sprintf(", now %g", p.CurrentW)
		}
		return s
	}
	return "watts, comma list"
}

func (m Model) workPanel(w, h int) string {
	var lines []string
	hint := map[string]string{rowPP: "prompt tokens", rowTG: "generated tokens", rowReps: "repetitions",
		rowBatchSeq: "prompt tokens per sequence", rowDecLen: "tokens per sequence (TGI's)", rowBatch: "comma list",
		rowRuns:    "timed runs per batch size",
		rowThreads: "0 = all cores", rowPrompts: "requests per point", rowConc: "max in flight, comma list",
		rowRate: "req/s or inf, comma list", rowMaxSeqs: "0 = engine's default", rowInLen: "prompt tokens",
		rowOutLen: "tokens to generate", rowPower: m.powerHint(), rowDSPath: "", rowURL: "", rowServed: "",
		rowEndpoint: "the " + backends[m.backend] + " API's path",
		rowSeqLen:   "S (queries and keys)", rowHeads: "H", rowHeadDim: "D", rowBlock: "block-mask tile side",
		rowKReps: "timed rounds after a warmup"}
	if m.kind == Kernels {
		hint[rowThreads] = "CPU threads, 0 = all cores"
	}
	if m.kind == Throughput {
		maps.Copy(hint, throughputHints)
	}
	if ds := m.datasetName(); ds == "sharegpt" || ds == "custom" {
		hint[rowOutLen] = "0 = the dataset's own"
	}
	if m.found.URL != "" {
		if m.found.Err != nil {
			hint[rowServed] = m.theme.Error.Render("✗ /v1/models: " + m.found.Err.Error())
		} else {
			hint[rowServed] = "/v1/models: " + m.found.Model + " (empty: this one)"
		}
	} else {
		hint[rowServed] = "empty = the server's first model"
	}
	for _, r := range m.workRows() {
		label := fmt.Sprintf("%-13s", r)
		switch r {
		case rowKind:
			lines = append(lines, m.line(r, false, label, choice(m.kind.String())))
		case rowSuite:
			lines = append(lines, m.line(r, false, label, choice(m.suiteName())))
		case rowDataset:
			lines = append(lines, m.line(r, false, label, choice(m.datasetName())))
		case rowBackend:
			b := backends[m.backend]
			if b == "" {
				b = inprocLabel
			}
			lines = append(lines, m.line(r, false, label, choice(b)))
		case rowKV:
			v := kvTypes[m.kv]
			if v == "" {
				v = "default"
			}
			v = choice(v)
			if h := hint[r]; h != "" && panel.Width("  "+label+v+"  "+h) <= w-2 { // dropped, not cut
				v += "  " + m.theme.Dim.Render(h)
			}
			lines = append(lines, m.line(r, false, label, v))
		case rowCases: // the names where they fit
			lines = append(lines, m.textLine(r, w, "comma list, empty = all: "+strings.Join(kernelbench.CaseNames(m.suiteName()), ","), "comma list, empty = all"))
		default:
			lines = append(lines, m.textLine(r, w, hint[r]))
		}
	}
	return panel.Box(m.theme, "Workload", strings.Join(lines, "\n"), w, h)
}

// wrap breaks an estimate line at its " · " joints so that no part is cut at width
// w (a part longer than w keeps its own line); a line broken ends in " ·"; a line
// break in s starts a new line.
func wrap(s string, w int) string {
	if first, rest, ok := strings.Cut(s, "\n"); ok {
		return wrap(first, w) + "\n" + wrap(rest, w)
	}
	var lines []string
	cur := ""
	parts := strings.Split(s, " · ")
	for i, part := range parts {
		more := 0 // room for the " ·" of a line that is not the last
		if i < len(parts)-1 {
			more = 2
		}
		switch {
		case i == 0:
			cur = " " + part
		case panel.Width(cur)+3+panel.Width(part)+more <= w:
			cur += " · " + part
		default:
			lines = append(lines, cur+" ·")
			cur = "   " + part
		}
	}
	return strings.Join(append(lines, cur), "\n")
}

// View renders the two panels (side by side from 100 columns, stacked below) and the
// estimate line.
func (m Model) View() string {
	mh := len(m.modelRows()) + 2
	wh := len(m.workRows()) + 2
	est := wrap(m.Estimate(), m.w)
	switch {
	case m.prompt != nil:
		est = m.prompt.View()
	case m.errorMsg != "":
		est = " " + m.theme.Error.Render("✗ cannot "+m.refused+": "+m.errorMsg)
	case m.Note != "":
		est = " " + m.Note
	}
	var body string
	// the focused row's line in body, to keep it in view
	fi := slices.Index(m.rows(), m.focused())
	nm := len(m.modelRows())
	focusLine := 1 + fi
	switch {
	case nm == 0:
		body = m.workPanel(m.w, wh)
	case m.w >= 100:
		lw := m.w * 45 / 100
		h := max(mh, wh)
		body = panel.Join(m.modelPanel(lw, h), m.workPanel(m.w-lw, h))
		if fi >= nm {
			focusLine = 1 + fi - nm
		}
	default:
		body = panel.Stack(m.modelPanel(m.w, mh), m.workPanel(m.w, wh))
		if fi >= nm {
			focusLine = mh + 1 + fi - nm
		}
	}
	lines := strings.Split(body, "\n")
	estLines := strings.Split(est, "\n")
	if avail := max(1, m.h-len(estLines)); len(lines) > avail {
		// what does not fit scrolls: a window on the panels that holds the focused row
		off := min(max(0, focusLine-avail/2), len(lines)-avail)
		lines = lines[off : off+avail]
	}
	return strings.Join(panel.Lines(strings.Join(append(lines, estLines...), "\n"), m.w, m.h), "\n")
}
