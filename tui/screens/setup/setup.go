// Package setup is the Setup screen: pick a model (built-in, synthetic shape and type,
// a .gguf file here, or a path) and a workload (bench or serve-bench) with its
// parameters, validated inline; enter starts the run.
package setup

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/prompt"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/micro"
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
)

// String names the workload as the command line does.
func (k Kind) String() string { return [...]string{"bench", "serve-bench"}[k] }

// Config is what the user set up: everything a front end needs to build the workload.
type Config struct {
	Kind  Kind
	Model workloads.BenchModel // Path (Builtin for the built-in model) or Shape and Type
	// bench
	Prompt, Gen, Reps, Threads int
	// serve-bench
	Dataset     string  // random or sonnet
	Prompts     int     // requests
	Concurrency int     // most requests in flight
	Rate        float64 // requests per second; +Inf sends all at once
	URL         string  // base URL of an OpenAI-compatible server; empty = in-process engine
}

// ModelName is how the model is shown: "stories260K", "llama-1b Q4_0", a file name.
func (c Config) ModelName() string {
	switch {
	case c.Model.Path == Builtin:
		return builtin.Name
	case c.Model.Shape != "":
		return c.Model.Shape + " " + c.Model.Type
	}
	return filepath.Base(c.Model.Path)
}

// Describe is the one-line summary of the run shown in the Live header.
func (c Config) Describe() string {
	if c.Kind == Bench {
		return fmt.Sprintf("bench · %s · pp %d tg %d · r %d", c.ModelName(), c.Prompt, c.Gen, c.Reps)
	}
	rate := "inf"
	if !math.IsInf(c.Rate, 1) {
		rate = strconv.FormatFloat(c.Rate, 'g', -1, 64)
	}
	return fmt.Sprintf("serve-bench · %s · c=%d · rate %s", c.ModelName(), c.Concurrency, rate)
}

// BenchSpec returns the llama-bench spec of a Bench config.
func (c Config) BenchSpec() workloads.BenchSpec {
	return workloads.BenchSpec{
		Models: []workloads.BenchModel{c.Model},
		Prompt: []int{c.Prompt}, Gen: []int{c.Gen}, Threads: []int{c.Threads}, Reps: c.Reps,
	}
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
		key.NewBinding(key.WithKeys("0"), key.WithHelp("0-9 ⌫", "edit a number or text field"))}
}

// row ids.
const (
	rowBuiltin = "builtin"
	rowShape   = "shape"
	rowType    = "type"
	rowPath    = "path"
	rowKind    = "kind"
	rowPP      = "pp"
	rowTG      = "tg"
	rowReps    = "reps"
	rowThreads = "threads"
	rowDataset = "dataset"
	rowPrompts = "prompts"
	rowConc    = "concurrency"
	rowRate    = "rate"
	rowBackend = "backend"
	filePrefix = "file:"
)

var datasets = []string{"random", "sonnet"}

// Model is the Setup screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Keys  KeyMap

	files    []string
	focus    int
	chosen   string // the model row chosen
	shapes   []string
	types    []string
	shape    int
	typ      int
	kind     Kind
	dataset  int
	remote   bool
	text     map[string]string // every editable field's text
	tried    bool              // enter was pressed: show every error
	errorMsg string
	refused  string // what errorMsg refused: "run" (enter) or "save" (s)
	// Note is the outcome of the last save or open, shown instead of the estimate
	// until the next key.
	Note   string
	prompt *prompt.Model // a profile path being typed
	open   bool          // the prompt opens a profile (else it saves one)
	last   string        // the profile path saved or opened last
}

// FindModels returns the *.gguf files in dir, sorted (none when it cannot be read).
func FindModels(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*.gguf"))
	slices.Sort(m)
	return m
}

// New returns the Setup screen offering files besides the built-in and synthetic models.
func New(t theme.Theme, files []string) Model {
	m := Model{theme: t, Keys: DefaultKeyMap(), files: files, chosen: rowBuiltin, w: 80, h: 22,
		shapes: synth.Shapes(), types: synth.FileTypes(),
		text: map[string]string{
			rowPath: "", rowPP: "512", rowTG: "128", rowReps: "5", rowThreads: "0",
			rowPrompts: "100", rowConc: "8", rowRate: "inf", rowBackend: "http://127.0.0.1:8000",
		}}
	m.shape = max(0, slices.Index(m.shapes, "llama-1b"))
	m.typ = max(0, slices.Index(m.types, "Q4_0"))
	return m
}

// SetSize sets the area the screen draws in (between header and footer).
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

func (m Model) modelRows() []string {
	rows := []string{rowBuiltin, rowShape, rowType}
	for _, f := range m.files {
		rows = append(rows, filePrefix+f)
	}
	return append(rows, rowPath)
}

func (m Model) workRows() []string {
	if m.kind == Bench {
		return []string{rowKind, rowPP, rowTG, rowReps, rowThreads}
	}
	return []string{rowKind, rowDataset, rowPrompts, rowConc, rowRate, rowBackend}
}

func (m Model) rows() []string { return append(m.modelRows(), m.workRows()...) }

func (m Model) focused() string { return m.rows()[min(m.focus, len(m.rows())-1)] }

// Capturing reports whether a free-text field has the focus, so the root passes
// letters (q included) to it rather than treating them as global keys.
func (m Model) Capturing() bool {
	if m.prompt != nil {
		return true
	}
	f := m.focused()
	return f == rowPath || (f == rowBackend && m.remote)
}

// Update handles a key.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
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
		path := m.last
		if path == "" {
			path = "." + string(filepath.Separator)
		}
		m.prompt, m.open = prompt.New("open profile", path), true
	case key.Matches(k, m.Keys.Up):
		m.move(-1)
	case key.Matches(k, m.Keys.Down):
		m.move(1)
	case key.Matches(k, m.Keys.Pick) && !m.Capturing():
		m.pick()
	case key.Matches(k, m.Keys.Left):
		m.change(-1)
	case key.Matches(k, m.Keys.Right):
		m.change(1)
	case key.Matches(k, m.Keys.Run):
		m.tried = true
		c, err := m.Config()
		if err != nil {
			m.errorMsg, m.refused = err.Error(), "run"
			return m, nil
		}
		m.errorMsg = ""
		return m, runCmd(c)
	case k.Code == tea.KeyBackspace:
		if f := m.focused(); m.editable(f) {
			s := []rune(m.text[f])
			if len(s) > 0 {
				m.text[f] = string(s[:len(s)-1])
			}
		}
	case k.Text != "":
		m.typeText(k.Text)
	}
	return m, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// promptKey edits the profile path; enter hands it to the root (SaveMsg, OpenMsg).
func (m Model) promptKey(k tea.KeyPressMsg) (Model, tea.Cmd) {
	p := *m.prompt
	m.prompt = &p
	switch p.Update(k) {
	case prompt.Cancelled:
		m.prompt, m.Note = nil, "cancelled"
	case prompt.Submitted:
		m.prompt, m.last = nil, p.Text
		if m.open {
			return m, func() tea.Msg { return OpenMsg{Path: p.Text} }
		}
		c, err := m.Config()
		if err != nil {
			m.errorMsg, m.refused = err.Error(), "save"
			return m, nil
		}
		return m, func() tea.Msg { return SaveMsg{Config: c, Path: p.Text} }
	}
	return m, nil
}

// FooterNow returns the bindings the footer shows now: a prompt's while one is
// open; else space only where it would pick another model, s/o only where they
// do not type into a text field.
func (m Model) FooterNow() []key.Binding {
	switch {
	case m.prompt != nil && m.open:
		return prompt.Footer("open")
	case m.prompt != nil:
		return prompt.Footer("write")
	}
	var out []key.Binding
	for _, b := range m.Keys.Footer() {
		switch {
		case b.Help() == m.Keys.Pick.Help() && !m.canPick():
		case b.Help() == m.Keys.Profile.Help() && m.Capturing():
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

// SetConfig shows c on the screen, as if it had been set up by hand.
func (m *Model) SetConfig(c Config) {
	m.kind, m.tried, m.errorMsg = c.Kind, false, ""
	switch {
	case c.Model.Path == Builtin:
		m.chosen = rowBuiltin
	case c.Model.Shape != "":
		m.chosen = rowShape
		m.shape = max(0, slices.Index(m.shapes, c.Model.Shape))
		m.typ = max(0, slices.Index(m.types, c.Model.Type))
	case slices.Contains(m.files, c.Model.Path):
		m.chosen = filePrefix + c.Model.Path
	default:
		m.chosen, m.text[rowPath] = rowPath, c.Model.Path
	}
	if c.Kind == Bench {
		m.text[rowPP], m.text[rowTG] = strconv.Itoa(c.Prompt), strconv.Itoa(c.Gen)
		m.text[rowReps], m.text[rowThreads] = strconv.Itoa(c.Reps), strconv.Itoa(c.Threads)
	} else {
		m.dataset = max(0, slices.Index(datasets, c.Dataset))
		m.text[rowPrompts], m.text[rowConc] = strconv.Itoa(c.Prompts), strconv.Itoa(c.Concurrency)
		m.text[rowRate] = "inf"
		if !math.IsInf(c.Rate, 1) {
			m.text[rowRate] = strconv.FormatFloat(c.Rate, 'g', -1, 64)
		}
		m.remote = c.URL != ""
		if m.remote {
			m.text[rowBackend] = c.URL
		}
	}
	m.focus = min(m.focus, len(m.rows())-1)
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

func (m Model) editable(f string) bool {
	switch f {
	case rowPath, rowPP, rowTG, rowReps, rowThreads, rowPrompts, rowConc, rowRate:
		return true
	case rowBackend:
		return m.remote
	}
	return false
}

func (m *Model) typeText(s string) {
	f := m.focused()
	if !m.editable(f) {
		return
	}
	switch f {
	case rowPath, rowBackend:
	case rowRate:
		if strings.Trim(s, "0123456789.inf") != "" {
			return
		}
	default:
		if strings.Trim(s, "0123456789") != "" {
			return
		}
	}
	m.text[f] += s
	if f == rowPath {
		m.chosen = rowPath
	}
}

func cycle(i, d, n int) int { return ((i+d)%n + n) % n }

func (m *Model) change(d int) {
	switch f := m.focused(); f {
	case rowShape:
		m.shape = cycle(m.shape, d, len(m.shapes))
	case rowType:
		m.typ = cycle(m.typ, d, len(m.types))
	case rowKind:
		m.kind = Kind(cycle(int(m.kind), d, 2))
	case rowDataset:
		m.dataset = cycle(m.dataset, d, len(datasets))
	case rowBackend:
		m.remote = !m.remote
	case rowPP, rowTG, rowPrompts:
		if n, err := strconv.Atoi(m.text[f]); err == nil {
			if d > 0 {
				n = max(1, n*2)
			} else {
				n /= 2
			}
			m.text[f] = strconv.Itoa(n)
		}
	case rowReps, rowThreads, rowConc:
		if n, err := strconv.Atoi(m.text[f]); err == nil {
			m.text[f] = strconv.Itoa(max(0, n+d))
		}
	}
}

// fieldErr returns what is wrong with a field's value ("" when fine).
func (m Model) fieldErr(f string) string {
	v := strings.TrimSpace(m.text[f])
	atLeast := func(lo int) string {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo {
			return fmt.Sprintf("a whole number ≥ %d", lo)
		}
		return ""
	}
	switch f {
	case rowPP, rowTG, rowThreads:
		return atLeast(0)
	case rowReps, rowPrompts, rowConc:
		return atLeast(1)
	case rowRate:
		if v == "inf" {
			return ""
		}
		if r, err := strconv.ParseFloat(v, 64); err != nil || r <= 0 {
			return "requests/s > 0, or inf"
		}
	case rowPath:
		if m.chosen != rowPath {
			return ""
		}
		if v == "" {
			return "type a path to a .gguf file"
		}
		if st, err := os.Stat(v); err != nil || st.IsDir() {
			return "no such file"
		}
	case rowBackend:
		if !m.remote {
			return ""
		}
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
	num := func(f string) int { n, _ := strconv.Atoi(strings.TrimSpace(m.text[f])); return n }
	c := Config{Kind: m.kind, Prompt: num(rowPP), Gen: num(rowTG), Reps: num(rowReps), Threads: num(rowThreads),
		Dataset: datasets[m.dataset], Prompts: num(rowPrompts), Concurrency: num(rowConc), Rate: math.Inf(1)}
	if r := strings.TrimSpace(m.text[rowRate]); r != "inf" {
		c.Rate, _ = strconv.ParseFloat(r, 64)
	}
	if m.remote {
		c.URL = strings.TrimSpace(m.text[rowBackend])
	}
	switch {
	case m.chosen == rowBuiltin:
		c.Model.Path = Builtin
	case m.chosen == rowShape:
		c.Model.Shape, c.Model.Type = m.shapes[m.shape], m.types[m.typ]
	case m.chosen == rowPath:
		c.Model.Path = strings.TrimSpace(m.text[rowPath])
	default:
		c.Model.Path = strings.TrimPrefix(m.chosen, filePrefix)
	}
	if c.Kind == Bench {
		if c.Prompt == 0 && c.Gen == 0 {
			return Config{}, errors.New("pp and tg are both 0: nothing to run")
		}
		if err := micro.Validate(c.BenchSpec()); err != nil {
			return Config{}, err
		}
	}
	return c, nil
}

// Estimate is the line under the panels: what the run will do.
func (m Model) Estimate() string {
	c, err := m.Config()
	if err != nil {
		return "✗ " + err.Error()
	}
	if c.Kind == Bench {
		n := len(micro.Expand(c.BenchSpec().WithDefaults()))
		return fmt.Sprintf("Estimated: %d tests × %d reps (after a warmup each) on %s", n, c.Reps, c.ModelName())
	}
	where := "in-process engine"
	if c.URL != "" {
		where = c.URL
	}
	return fmt.Sprintf("Estimated: %d requests, ≤ %d in flight, against %s", c.Prompts, c.Concurrency, where)
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
	if e := m.fieldErr(f); e != "" && (m.tried || m.focused() == f || f == rowPath) && (f != rowPath || m.chosen == rowPath) {
		s += "  " + t.Error.Render("✗ "+e)
	}
	if m.focused() == f {
		return t.Cursor.Render(s)
	}
	return s
}

func choice(s string) string { return "◂ " + s + " ▸" }

func (m Model) field(f string) string {
	v := m.text[f]
	if m.focused() == f {
		v += "_"
	}
	return v
}

func (m Model) modelPanel(w, h int) string {
	var lines []string
	shape, _ := synth.Lookup(m.shapes[m.shape])
	for _, r := range m.modelRows() {
		switch {
		case r == rowBuiltin:
			lines = append(lines, m.line(r, true, builtin.Name+" (built-in)", "  "+m.theme.Dim.Render(human(int64(len(builtin.Stories260K))))))
		case r == rowShape:
			lines = append(lines, m.line(r, true, "synthetic ", choice(m.shapes[m.shape])+"  "+m.theme.Dim.Render(shape.Description)))
		case r == rowType:
			lines = append(lines, m.line(r, false, "    type      ", choice(m.types[m.typ])))
		case r == rowPath:
			lines = append(lines, m.line(r, true, "path: ", m.field(r)))
		default:
			name := strings.TrimPrefix(r, filePrefix)
			size := ""
			if st, err := os.Stat(name); err == nil {
				size = "  " + m.theme.Dim.Render(human(st.Size()))
			}
			lines = append(lines, m.line(r, true, name, size))
		}
	}
	return panel.Box(m.theme, "Model", strings.Join(lines, "\n"), w, h)
}

func (m Model) workPanel(w, h int) string {
	var lines []string
	hint := map[string]string{rowPP: "prompt tokens", rowTG: "generated tokens", rowReps: "repetitions",
		rowThreads: "0 = all cores", rowPrompts: "requests", rowConc: "max in flight", rowRate: "req/s or inf"}
	for _, r := range m.workRows() {
		label := fmt.Sprintf("%-12s", r)
		switch r {
		case rowKind:
			lines = append(lines, m.line(r, false, "workload    ", choice(m.kind.String())))
		case rowDataset:
			lines = append(lines, m.line(r, false, label, choice(datasets[m.dataset])))
		case rowBackend:
			v := choice("in-process")
			if m.remote {
				v = choice("URL") + " " + m.field(r)
			}
			lines = append(lines, m.line(r, false, label, v))
		default:
			lines = append(lines, m.line(r, false, label, fmt.Sprintf("%-6s ", m.field(r))+m.theme.Dim.Render(hint[r])))
		}
	}
	return panel.Box(m.theme, "Workload", strings.Join(lines, "\n"), w, h)
}

// View renders the two panels (side by side from 100 columns, stacked below) and the
// estimate line.
func (m Model) View() string {
	mh := len(m.modelRows()) + 2
	wh := len(m.workRows()) + 2
	est := " " + m.Estimate()
	switch {
	case m.prompt != nil:
		est = m.prompt.View()
	case m.errorMsg != "":
		est = " " + m.theme.Error.Render("✗ cannot "+m.refused+": "+m.errorMsg)
	case m.Note != "":
		est = " " + m.Note
	}
	var body string
	if m.w >= 100 {
		lw := m.w * 45 / 100
		h := max(mh, wh)
		body = panel.Join(m.modelPanel(lw, h), m.workPanel(m.w-lw, h))
	} else {
		body = panel.Stack(m.modelPanel(m.w, mh), m.workPanel(m.w, wh))
	}
	return strings.Join(panel.Lines(body+"\n"+est, m.w, m.h), "\n")
}
