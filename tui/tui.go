// Package tui is the terminal workbench's root model: it routes between the screens
// (Setup, Live, Results, Compare, History), holds the window size, the global keys
// (q quit, ? help, tab/shift+tab switch screen) and the one error line. The screens
// and components do everything else.
package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/profiles"
	"llmbench/tui/components/help"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/statusbar"
	"llmbench/tui/screens/compare"
	"llmbench/tui/screens/history"
	"llmbench/tui/screens/live"
	"llmbench/tui/screens/results"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
)

// Screen indexes the tabs.
type Screen int

// The screens, in tab order.
const (
	ScreenSetup Screen = iota
	ScreenLive
	ScreenResults
	ScreenCompare
	ScreenHistory
)

var tabNames = []string{"Setup", "Live", "Results", "Compare", "History"}

// Starter builds the workload a Config describes, with the run options (a telemetry
// sampler) and a note on the device (why there is no GPU). main supplies it: it is
// where backends are wired.
type Starter func(c setup.Config) (w run.Workload, note string, opts []run.Option, err error)

// Options configure New.
type Options struct {
	Theme  theme.Theme
	Files  []setup.File // model files offered on the Setup screen (found on the machine)
	Start  Starter
	Device string // what the header shows at the right outside a run ("CPU: … · GPU: none")
	// Store keeps every finished run and lists them on the History screen; nil keeps
	// the runs of this session in memory.
	Store Store
	// SaveProfile writes a run's setup as a profile (Results `s`); nil when this build
	// cannot.
	SaveProfile ProfileSaver
	// Env describes the machine and build for every run's Document (exports and the
	// store); nil leaves it to the store.
	Env []result.KV
	// Queue holds runs started one after another from launch (llmbench run
	// PROFILE.yaml): each is shown Live, ends on Results and is saved like any run.
	// A run that is stopped (esc), fails or cannot be built holds the queue: `n`
	// (offered on Results) starts the next one; quitting drops the rest.
	Queue []QueuedRun
	// Power is the GPU's power-limit range for Setup's power field (and why limits
	// cannot be set, when they cannot).
	Power setup.Power
	// Detect asks an external server at url for the model it serves (its first in
	// /v1/models), shown on Setup; nil: Setup does not ask.
	Detect func(url string) (string, error)
	// CheckModel says why a model file cannot run (nil: it can): Setup refuses such a
	// file before a run is queued. Nil: Setup only checks that it exists.
	CheckModel func(path string) error
	// PlanSynthetic says what writing a synthetic model takes (size, free disk);
	// nil: Setup shows the size only.
	PlanSynthetic func(shape, typ string) (setup.Plan, error)
}

// QueuedRun is one run of Options.Queue: its title and how to build its workload
// (built when it starts, as Starter does for a Setup config).
type QueuedRun struct {
	Title   string
	Serve   bool // a serving run (the Live screen shows requests and latencies)
	Kernels bool // a kernel suite (the Live screen shows its cases and sections)
	// Rows names a throughput run's rows (setup.ThroughputRowNames; the Live screen
	// shows each row's requests and output tok/s); nil for other runs.
	Rows  []string
	Start func() (w run.Workload, note string, opts []run.Option, err error)
}

// liveKind is the Live views of a run: a throughput run's rows, serving, a kernel
// suite or bench.
func liveKind(serve, kernels bool, rows []string) live.Kind {
	switch {
	case rows != nil:
		return live.ThroughputRun
	case serve:
		return live.ServeRun
	case kernels:
		return live.KernelsRun
	}
	return live.BenchRun
}

// queueMsg starts the next run of the queue.
type queueMsg struct{}

func nextInQueue() tea.Msg { return queueMsg{} }

// KeyMap holds the global keys.
type KeyMap struct {
	Quit, ForceQuit, Help, Next, Prev key.Binding
	// NextRun starts the next queued run after one was stopped or failed (Results).
	NextRun key.Binding
}

// DefaultKeyMap returns the global keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit (stops a run)")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Next:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "screens")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous screen")),
		NextRun:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next queued run")),
	}
}

// Model is the root model.
type Model struct {
	opts     Options
	w, h     int
	Keys     KeyMap
	bar      statusbar.Model
	help     help.Model
	showHelp bool
	screen   Screen
	err      string

	setup   setup.Model
	live    live.Model
	results results.Model
	compare compare.Model
	history history.Model

	running *setup.Config // the setup of the run on the Live screen

	queue      []QueuedRun // queued runs not started yet
	queueTotal int         // runs the queue held at launch
	queued     string      // title of the queued run going now ("" when none)
	held       bool        // a queued run was stopped or failed: n starts the next
}

// New returns the root model on the Setup screen.
func New(o Options) Model {
	t := o.Theme
	note := ""
	if o.Store == nil { // keep the session's runs, so History and Compare still work
		o.Store, note = history.NewMemory(), "this session only: no results store"
	}
	m := Model{opts: o, Keys: DefaultKeyMap(), bar: statusbar.New(t, tabNames), help: help.New(t),
		setup: setup.New(t, o.Files), live: live.New(t), results: results.New(t, o.SaveProfile),
		compare: compare.New(t), history: history.New(t, o.Store),
	}
	m.history.Note = note
	m.setup.SetPower(o.Power)
	m.setup.SetDetect(o.Detect)
	m.setup.SetCheck(o.CheckModel)
	m.setup.SetPlan(o.PlanSynthetic)
	m.queue, m.queueTotal = o.Queue, len(o.Queue)
	m.resize(80, 24)
	return m
}

// Init implements tea.Model: it starts the first queued run, if any.
func (m Model) Init() tea.Cmd {
	if len(m.queue) > 0 {
		return nextInQueue
	}
	return nil
}

// Queued returns how many queued runs have not started yet and whether the queue
// is held (a run of it was stopped or failed; n starts the next).
func (m Model) Queued() (left int, held bool) { return len(m.queue), m.held }

// Screen returns the screen shown.
func (m Model) Screen() Screen { return m.screen }

// Err returns the error line ("" when none).
func (m Model) Err() string { return m.err }

func (m *Model) resize(w, h int) {
	m.w, m.h = w, h
	bh := max(1, h-3) // header, error line, footer
	m.bar.SetSize(w, 1)
	m.help.SetSize(w, bh)
	m.setup.SetSize(w, bh)
	m.live.SetSize(w, bh)
	m.results.SetSize(w, bh)
	m.compare.SetSize(w, bh)
	m.history.SetSize(w, bh)
}

// Update implements tea.Model: the router owns navigation; screens own the rest.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case setup.DetectMsg:
		var cmd tea.Cmd
		m.setup, cmd = m.setup.Update(msg)
		return m, cmd
	case setup.RunMsg:
		return m.start(msg.Config)
	case queueMsg:
		return m.startQueued()
	case setup.SaveMsg:
		return m.saveProfile(msg), nil
	case setup.OpenMsg:
		return m.openProfile(msg.Path), nil
	case live.DoneMsg:
		return m.done(msg)
	case history.OpenMsg:
		var failed error
		if msg.Failed != "" {
			failed = errors.New(msg.Failed)
		}
		m.results.Show(msg.Doc, msg.ID, nil, failed, 0)
		m.screen = ScreenResults
		return m, nil
	case history.CompareMsg:
		return m.compareDocs(msg.Docs), nil
	case results.CompareMsg:
		return m.compareWithPrevious(msg.ID), nil
	}
	var cmd tea.Cmd
	m.live, cmd = m.live.Update(msg) // the run's own messages
	return m, cmd
}

// capturing reports whether the screen shown takes keys as text (a path, a filter,
// a confirmation), so that q, ? and tab type rather than act.
func (m Model) capturing() bool {
	if m.showHelp {
		return false
	}
	switch m.screen {
	case ScreenSetup:
		return m.setup.Capturing()
	case ScreenResults:
		return m.results.Capturing()
	case ScreenHistory:
		return m.history.Capturing()
	}
	return false
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	capturing := m.capturing()
	switch {
	case key.Matches(k, m.Keys.ForceQuit), key.Matches(k, m.Keys.Quit) && !capturing:
		m.live.Cancel()
		return m, tea.Quit
	case m.showHelp:
		if key.Matches(k, m.help.Keys.Close) {
			m.showHelp = false
			return m, nil
		}
		var cmd tea.Cmd
		m.help, cmd = m.help.Update(k)
		return m, cmd
	case key.Matches(k, m.Keys.Help) && !capturing:
		m.showHelp = true
		m.help.Open(m.helpGroups())
		return m, nil
	case key.Matches(k, m.Keys.Next) && !capturing:
		m.show((m.screen + 1) % Screen(len(tabNames)))
		return m, nil
	case key.Matches(k, m.Keys.Prev) && !capturing:
		m.show((m.screen + Screen(len(tabNames)) - 1) % Screen(len(tabNames)))
		return m, nil
	case key.Matches(k, m.Keys.NextRun) && m.held && !capturing:
		return m.startQueued()
	}
	m.err = ""
	var cmd tea.Cmd
	switch m.screen {
	case ScreenSetup:
		m.setup, cmd = m.setup.Update(k)
	case ScreenLive:
		m.live, cmd = m.live.Update(k)
	case ScreenResults:
		m.results, cmd = m.results.Update(k)
	case ScreenCompare:
		m.compare, cmd = m.compare.Update(k)
	case ScreenHistory:
		m.history, cmd = m.history.Update(k)
	}
	return m, cmd
}

// paste hands a paste to the screen's text field, if one takes text now.
func (m Model) paste(p tea.PasteMsg) (tea.Model, tea.Cmd) {
	if !m.capturing() {
		return m, nil
	}
	var cmd tea.Cmd
	switch m.screen {
	case ScreenSetup:
		m.setup, cmd = m.setup.Update(p)
	case ScreenResults:
		m.results, cmd = m.results.Update(p)
	case ScreenHistory:
		m.history, cmd = m.history.Update(p)
	}
	return m, cmd
}

// show switches to screen s (History reads the store again).
func (m *Model) show(s Screen) {
	m.screen = s
	if s == ScreenHistory {
		m.history.Reload()
	}
}

// Document returns the report of a run that ended with d: what every export and
// the results store take. A failed run keeps what it measured, marked partial.
func Document(title string, env []result.KV, d run.Done) result.Document {
	doc := result.Document{Title: title, Started: time.Now().Add(-d.Elapsed), Env: env, Partial: d.Partial || d.Err != nil}
	switch r := d.Result.(type) {
	case *result.Stored:
		doc = r.Doc
		doc.Partial = doc.Partial || d.Partial || d.Err != nil
		if doc.Title == "" {
			doc.Title = title
		}
		if doc.Env == nil {
			doc.Env = env
		}
	case *micro.Result:
		doc.Bench = r
		doc.Partial = doc.Partial || r.Partial
	case *serving.Result:
		doc.Serving = []*serving.Result{r}
		doc.Partial = doc.Partial || r.Partial
	case []*serving.Result:
		doc.Serving = r
		for _, p := range r {
			doc.Partial = doc.Partial || p.Partial
		}
	case *kernelbench.Report:
		doc.Kernels = r
		doc.Partial = doc.Partial || r.Partial
	}
	return doc
}

// done shows a run that ended on Results and writes it to the store: the one place
// where runs are saved, partial or not.
func (m Model) done(msg live.DoneMsg) (tea.Model, tea.Cmd) {
	title := msg.Title
	if m.queued != "" {
		title = m.queued // without the [i/n] the Live header shows
	}
	doc := Document(title, m.opts.Env, msg.Done)
	id := ""
	m.err = ""
	if st, ok := msg.Done.Result.(*result.Stored); ok {
		id = st.ID // the job kept it in the store as it ran
	} else if m.opts.Store != nil && (doc.Bench != nil || len(doc.Serving) > 0 || doc.Kernels != nil || doc.Batch != nil || doc.Throughput != nil) {
		var err error
		if id, err = m.opts.Store.Save(doc); err != nil {
			m.err = "results store: " + err.Error()
		}
	}
	m.results.Show(doc, id, m.running, msg.Done.Err, msg.Done.Elapsed)
	if m.running != nil && msg.Done.Err == nil && !doc.Partial {
		if p, ok := paceOf(doc, msg.Done.Elapsed/time.Duration(max(1, len(m.running.PowerW)))); ok {
			m.setup.Learn(*m.running, p)
		}
	}
	m.screen = ScreenResults
	if msg.Done.Err != nil {
		m.err = "run failed: " + msg.Done.Err.Error()
	}
	m.history.Reload()
	var cmd tea.Cmd
	m.live, cmd = m.live.Update(msg)
	if m.queued != "" && len(m.queue) > 0 {
		if msg.Done.Partial || msg.Done.Err != nil || doc.Partial {
			m.held = true
			m.results.SetNote(fmt.Sprintf("■ queue held: n starts the next run (%d of %d left)", len(m.queue), m.queueTotal))
		} else {
			cmd = tea.Batch(cmd, nextInQueue)
		}
	}
	m.queued = ""
	return m, cmd
}

// startQueued starts the next queued run (after the one before it ended).
func (m Model) startQueued() (tea.Model, tea.Cmd) {
	if len(m.queue) == 0 || m.live.Running() {
		return m, nil
	}
	q := m.queue[0]
	m.queue, m.held = m.queue[1:], false
	i := m.queueTotal - len(m.queue)
	w, note, opts, err := q.Start()
	if err != nil {
		m.err = q.Title + ": " + err.Error()
		if len(m.queue) > 0 {
			m.held = true
			m.err += fmt.Sprintf(" · n runs the next (%d of %d left)", len(m.queue), m.queueTotal)
		}
		return m, nil
	}
	m.err, m.running, m.queued = "", nil, q.Title
	var cmd tea.Cmd
	m.live, cmd = m.live.Start(fmt.Sprintf("[%d/%d] %s", i, m.queueTotal, q.Title), liveKind(q.Serve, q.Kernels, q.Rows), w, note, opts...)
	if q.Rows != nil {
		m.live.SetRowNames(q.Rows)
	}
	m.live.SetSize(m.w, max(1, m.h-3))
	m.screen = ScreenLive
	return m, cmd
}

// saveProfile writes Setup's config as a profile file (Setup's `s`).
func (m Model) saveProfile(msg setup.SaveMsg) Model {
	if m.opts.SaveProfile == nil {
		m.err = "this build cannot save profiles"
		return m
	}
	if err := m.opts.SaveProfile(msg.Config, msg.Path); err != nil {
		m.err = err.Error()
		return m
	}
	m.err = ""
	m.setup.Note = "✓ profile saved to " + absPath(msg.Path)
	return m
}

// openProfile loads a profile file into Setup (Setup's `o`): one run that Setup can
// express, else the one-line reason on the error line.
func (m Model) openProfile(path string) Model {
	p, err := profiles.LoadFile(path)
	if err == nil {
		var c setup.Config
		if c, err = ConfigOf(p); err == nil {
			m.setup.SetConfig(c)
			m.err = ""
			m.setup.Note = "✓ opened " + absPath(path)
			return m
		}
		err = fmt.Errorf("%s: %w", path, err)
	}
	m.err = err.Error()
	return m
}

// absPath is path made absolute, for saying where a file was written or read.
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// compareDocs opens Compare on docs (the first is the baseline).
func (m Model) compareDocs(docs []result.Document) Model {
	if err := m.compare.Set(docs); err != nil {
		m.err = err.Error()
		return m
	}
	m.err = ""
	m.screen = ScreenCompare
	return m
}

// compareWithPrevious compares the run on Results (id in the store) with the newest
// earlier stored run of the same kind; without one it opens History to pick from.
func (m Model) compareWithPrevious(id string) Model {
	cur, ok := m.results.Document()
	if !ok {
		return m
	}
	runs, err := m.opts.Store.List()
	if err != nil {
		m.err = "results store: " + err.Error()
		return m
	}
	kind := result.Summarize(cur).Kind
	start := 0
	for i, r := range runs {
		if r.ID == id {
			start = i + 1
		}
	}
	for _, r := range runs[min(start, len(runs)):] {
		if r.ID == id || r.Kind != kind {
			continue
		}
		prev, err := m.opts.Store.Load(r.ID)
		if err != nil {
			m.err = "results store: " + err.Error()
			return m
		}
		return m.compareDocs([]result.Document{prev, cur})
	}
	m.show(ScreenHistory)
	if id != "" {
		m.history.Select(id)
	}
	m.history.SetStatus("no earlier " + kind + " run: pick runs with space, then c")
	return m
}

func (m Model) start(c setup.Config) (tea.Model, tea.Cmd) {
	if m.live.Running() {
		m.err = "a run is in progress: stop it with esc on the Live screen first"
		return m, nil
	}
	if m.opts.Start == nil {
		m.err = "this build cannot start runs"
		return m, nil
	}
	w, note, opts, err := m.opts.Start(c)
	if err != nil {
		m.err = err.Error()
		return m, nil
	}
	m.err = ""
	var cmd tea.Cmd
	m.running, m.queued = &c, ""
	var rows []string
	if c.Kind == setup.Throughput {
		rows = c.ThroughputRowNames()
	}
	m.live, cmd = m.live.Start(c.Describe(), liveKind(c.Kind == setup.Serve, c.Kind == setup.Kernels, rows), w, note, opts...)
	if rows != nil {
		m.live.SetRowNames(rows)
	}
	m.live.SetSize(m.w, max(1, m.h-3))
	m.screen = ScreenLive
	return m, cmd
}

// global returns the footer's keys that work on every screen; while a field takes
// text, q, ? and tab type into it, so only ctrl+c is offered.
func (m Model) global() []key.Binding {
	if m.capturing() {
		return []key.Binding{key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}
	}
	return []key.Binding{m.Keys.Next, m.Keys.Help, m.Keys.Quit}
}

func (m Model) helpGroups() []help.Group {
	var here []key.Binding
	switch m.screen {
	case ScreenSetup:
		here = m.setup.Keys.Help()
	case ScreenLive:
		here = m.live.Keys.Help()
	case ScreenResults:
		here = m.results.Keys.Help()
		if m.held {
			here = append([]key.Binding{m.Keys.NextRun}, here...)
		}
	case ScreenCompare:
		here = m.compare.Keys.Footer()
	case ScreenHistory:
		here = m.history.Keys.Help()
	}
	g := []help.Group{{Title: "Everywhere", Bindings: []key.Binding{m.Keys.Next, m.Keys.Prev, m.Keys.Help, m.Keys.Quit, m.Keys.ForceQuit}}}
	if len(here) > 0 {
		g = append([]help.Group{{Title: tabNames[m.screen], Bindings: here}}, g...)
	}
	return g
}

// Body renders the active screen (or the help) without header and footer.
func (m Model) Body() string {
	if m.showHelp {
		return m.help.View()
	}
	switch m.screen {
	case ScreenSetup:
		return m.setup.View()
	case ScreenLive:
		return m.live.View()
	case ScreenResults:
		return m.results.View()
	case ScreenCompare:
		return m.compare.View()
	}
	return m.history.View()
}

// Render returns the whole screen as text: header, body, error line, footer.
func (m Model) Render() string {
	bar := m.bar
	bar.Active = int(m.screen)
	bar.Right = m.opts.Device
	if r := m.live.HeaderRight(); r != "" && m.screen != ScreenSetup {
		bar.Right = r
	}
	var here []key.Binding
	switch {
	case m.showHelp:
		here = []key.Binding{m.help.Keys.Close}
		if m.help.Scrolls() {
			here = append(here, m.help.Keys.Scroll)
		}
	case m.screen == ScreenSetup:
		here = m.setup.FooterNow()
	case m.screen == ScreenLive:
		here = m.live.Footer()
	case m.screen == ScreenResults:
		here = m.results.Footer()
		if m.held && !m.capturing() {
			here = append([]key.Binding{m.Keys.NextRun}, here...)
		}
	case m.screen == ScreenCompare:
		here = m.compare.Keys.Footer()
	case m.screen == ScreenHistory:
		here = m.history.Footer()
	}
	errLine := ""
	if m.err != "" {
		errLine = m.opts.Theme.Error.Render(" ✗ " + m.err)
	}
	lines := []string{bar.Header()}
	lines = append(lines, panel.Lines(m.Body(), m.w, max(1, m.h-3))...)
	lines = append(lines, panel.Fit(errLine, m.w), bar.Footer(here, m.global()...))
	return strings.Join(lines, "\n")
}

// View implements tea.Model.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "llmbench"
	return v
}

// paceOf is what a finished run that took elapsed (per power limit) measured, for Setup's time
// estimate: mean prompt and generation t/s over its bench tests, its requests per
// second over its points, or a kernel suite's seconds per case and round.
func paceOf(doc result.Document, elapsed time.Duration) (setup.Pace, bool) {
	var p setup.Pace
	switch {
	case doc.Kernels != nil:
		k := doc.Kernels.Spec
		if rounds := len(setup.KernelCases(k)) * (k.Reps + 1); rounds > 0 {
			p.RoundSeconds = elapsed.Seconds() / float64(rounds)
		}
		return p, p.RoundSeconds > 0
	case doc.Bench != nil && len(doc.Bench.Records) > 0:
		var pp, tg []float64
		for i := range doc.Bench.Records {
			r := &doc.Bench.Records[i]
			switch {
			case r.NPrompt > 0 && r.NGen == 0:
				pp = append(pp, r.AvgTs())
			case r.NGen > 0 && r.NPrompt == 0:
				tg = append(tg, r.AvgTs())
			}
		}
		p.PromptTps, p.GenTps = mean(pp), mean(tg)
		return p, p.PromptTps > 0 || p.GenTps > 0
	case len(doc.Serving) > 0:
		var n int
		var secs float64
		for _, r := range doc.Serving {
			n += r.Summary.Completed + r.Summary.Failed
			secs += r.Duration.Seconds()
		}
		if secs > 0 {
			p.RequestsPerS = float64(n) / secs
		}
		return p, p.RequestsPerS > 0
	}
	return p, false
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
