// Package tui is the terminal workbench's root model: it routes between the screens
// (Setup, Live, Results, Compare, History), holds the window size, the global keys
// (q quit, ? help, tab/shift+tab switch screen) and the one error line. The screens
// and components do everything else.
package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/help"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/statusbar"
	"llmbench/tui/screens/compare"
	"llmbench/tui/screens/history"
	"llmbench/tui/screens/live"
	"llmbench/tui/screens/results"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/micro"
	"llmbench/workloads/report"
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
	Files  []string // .gguf files offered on the Setup screen
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
	Env []report.KV
}

// KeyMap holds the global keys.
type KeyMap struct {
	Quit, ForceQuit, Help, Next, Prev key.Binding
}

// DefaultKeyMap returns the global keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit (stops a run)")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Next:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "screens")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous screen")),
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
	m.resize(80, 24)
	return m
}

// Init implements tea.Model.
func (m Model) Init() tea.Cmd { return nil }

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
	case setup.RunMsg:
		return m.start(msg.Config)
	case live.DoneMsg:
		return m.done(msg)
	case history.OpenMsg:
		m.results.Show(msg.Doc, msg.ID, nil, nil, 0)
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
		}
		return m, nil
	case key.Matches(k, m.Keys.Help) && !capturing:
		m.showHelp = true
		m.help.Groups = m.helpGroups()
		return m, nil
	case key.Matches(k, m.Keys.Next) && !capturing:
		m.show((m.screen + 1) % Screen(len(tabNames)))
		return m, nil
	case key.Matches(k, m.Keys.Prev) && !capturing:
		m.show((m.screen + Screen(len(tabNames)) - 1) % Screen(len(tabNames)))
		return m, nil
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

// show switches to screen s (History reads the store again).
func (m *Model) show(s Screen) {
	m.screen = s
	if s == ScreenHistory {
		m.history.Reload()
	}
}

// Document returns the report of a run that ended with d: what every export and
// the results store take. A failed run keeps what it measured, marked partial.
func Document(title string, env []report.KV, d run.Done) report.Document {
	doc := report.Document{Title: title, Started: time.Now().Add(-d.Elapsed), Env: env, Partial: d.Partial || d.Err != nil}
	switch r := d.Result.(type) {
	case *micro.Result:
		doc.Bench = r
		doc.Partial = doc.Partial || r.Partial
	case *serving.Result:
		doc.Serving = []*serving.Result{r}
		doc.Partial = doc.Partial || r.Partial
	case []*serving.Result:
		doc.Serving = r
	}
	return doc
}

// done shows a run that ended on Results and writes it to the store: the one place
// where runs are saved, partial or not.
func (m Model) done(msg live.DoneMsg) (tea.Model, tea.Cmd) {
	doc := Document(msg.Title, m.opts.Env, msg.Done)
	id := ""
	m.err = ""
	if m.opts.Store != nil && (doc.Bench != nil || len(doc.Serving) > 0) {
		var err error
		if id, err = m.opts.Store.Save(doc); err != nil {
			m.err = "results store: " + err.Error()
		}
	}
	m.results.Show(doc, id, m.running, msg.Done.Err, msg.Done.Elapsed)
	m.screen = ScreenResults
	if msg.Done.Err != nil {
		m.err = "run failed: " + msg.Done.Err.Error()
	}
	m.history.Reload()
	var cmd tea.Cmd
	m.live, cmd = m.live.Update(msg)
	return m, cmd
}

// compareDocs opens Compare on docs (the first is the baseline).
func (m Model) compareDocs(docs []report.Document) Model {
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
	kind := report.Summarize(cur).Kind
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
		return m.compareDocs([]report.Document{prev, cur})
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
	m.running = &c
	m.live, cmd = m.live.Start(c.Describe(), c.Kind == setup.Serve, w, note, opts...)
	m.live.SetSize(m.w, max(1, m.h-3))
	m.screen = ScreenLive
	return m, cmd
}

func (m Model) global() []key.Binding {
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
	case m.screen == ScreenSetup:
		here = m.setup.Keys.Footer()
	case m.screen == ScreenLive:
		here = m.live.Footer()
	case m.screen == ScreenResults:
		here = m.results.Footer()
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
