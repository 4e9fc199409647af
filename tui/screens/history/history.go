package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/panel"
	"llmbench/tui/components/table"
	"llmbench/tui/theme"
	"llmbench/workloads/result"
)

// OpenMsg asks the root to show a stored run on the Results screen.
type OpenMsg struct {
	ID  string
	Doc result.Document
	// Failed is why the run failed ("" when it did not): Results says so.
	Failed string
}

// CompareMsg asks the root to compare stored runs (in the order they were selected).
type CompareMsg struct{ Docs []result.Document }

// KeyMap holds the History screen's keys.
type KeyMap struct {
	Up, Down, Filter, Select, Compare, Delete, Open, Clear, Yes key.Binding
}

// DefaultKeyMap returns the History keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "move")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "down")),
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Select:  key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "select")),
		Compare: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare")),
		Delete:  key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "delete")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Clear:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter and selection")),
		Yes:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes")),
	}
}

// Help returns every binding for the help view.
func (k KeyMap) Help() []key.Binding {
	return []key.Binding{k.Up, k.Filter, k.Select, k.Compare, k.Delete, k.Open, k.Clear}
}

// Model is the History screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Keys  KeyMap

	store     Store
	runs      []Run
	shown     []int // indexes into runs that pass the filter
	tab       table.Model
	selected  []string // ids in the order they were selected
	filter    string
	filtering bool
	confirm   string // id whose deletion waits for y
	status    string // the last outcome or error
	// Note says where the runs come from when that is worth saying ("this session
	// only: no results store").
	Note string
}

// New returns the History screen over store (nil: no store, nothing is kept).
func New(t theme.Theme, store Store) Model {
	m := Model{theme: t, Keys: DefaultKeyMap(), store: store, w: 80, h: 21}
	m.tab = table.New(t, " ", "when", "type", "workload", "model", "status", "headline")
	// narrow terminals leave out the workload and type before the headline figure
	m.tab.Priority = []int{0, 6, 1, 5, 4, 2, 3}
	m.tab.Cursor = true
	m.Reload()
	return m
}

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h; m.tab.SetSize(w-2, max(1, h-4)) }

// Capturing reports whether keys go to the screen as text (the filter, or the delete
// confirmation) rather than to the global keys.
func (m Model) Capturing() bool { return m.filtering || m.confirm != "" }

// Runs returns the runs listed (after the filter), newest first.
func (m Model) Runs() []Run {
	out := make([]Run, len(m.shown))
	for i, j := range m.shown {
		out[i] = m.runs[j]
	}
	return out
}

// Selected returns the ids selected for comparison, in the order they were picked.
func (m Model) Selected() []string { return slices.Clone(m.selected) }

// Reload reads the list from the store again, keeping the selection of runs that
// are still there.
func (m *Model) Reload() {
	if m.store == nil {
		m.runs, m.status = nil, "no results store: runs are not kept"
		m.apply()
		return
	}
	runs, err := m.store.List()
	m.status = "" // news about the list before (e.g. "no earlier run") is stale now
	if err != nil {
		m.status = "✗ " + err.Error()
	}
	m.runs = runs
	m.selected = slices.DeleteFunc(m.selected, func(id string) bool {
		return !slices.ContainsFunc(runs, func(r Run) bool { return r.ID == id })
	})
	m.apply()
}

// match reports whether r passes the filter (case-insensitive, any column).
func (m Model) match(r Run) bool {
	if m.filter == "" {
		return true
	}
	hay := strings.ToLower(strings.Join(m.cells(r), " ") + " " + r.Title)
	return strings.Contains(hay, strings.ToLower(m.filter))
}

func (m Model) cells(r Run) []string {
	sel := " "
	if slices.Contains(m.selected, r.ID) {
		sel = "•"
	}
	when := "-"
	if !r.Started.IsZero() {
		when = r.Started.Local().Format("01-02 15:04")
	}
	partial := ""
	switch {
	case r.Failed:
		partial = "✗ failed" // the headline says why
	case r.Partial:
		partial = "partial"
	}
	return []string{sel, when, r.Kind, r.Workload, r.Model, partial, r.Headline}
}

// apply recomputes the rows shown after a change of list, filter or selection.
func (m *Model) apply() {
	m.shown = m.shown[:0]
	var rows [][]string
	for i, r := range m.runs {
		if m.match(r) {
			m.shown = append(m.shown, i)
			rows = append(rows, m.cells(r))
		}
	}
	m.tab.SetRows(rows)
}

// current returns the run under the cursor.
func (m Model) current() (Run, bool) {
	if len(m.shown) == 0 {
		return Run{}, false
	}
	return m.runs[m.shown[m.tab.CursorRow()]], true
}

// Update handles the keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if p, ok := msg.(tea.PasteMsg); ok && m.filtering {
		m.filter += strings.TrimSpace(p.Content)
		m.apply()
		return m, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	switch {
	case m.confirm != "":
		return m.confirmKey(k), nil
	case m.filtering:
		m.filterKey(k)
		return m, nil
	}
	switch {
	case key.Matches(k, m.Keys.Filter):
		m.filtering, m.status = true, ""
	case key.Matches(k, m.Keys.Clear):
		m.filter, m.selected, m.status = "", nil, ""
		m.apply()
	case key.Matches(k, m.Keys.Select):
		if r, ok := m.current(); ok {
			if i := slices.Index(m.selected, r.ID); i >= 0 {
				m.selected = slices.Delete(m.selected, i, i+1)
			} else {
				m.selected = append(m.selected, r.ID)
			}
			m.status = ""
			m.apply()
		}
	case key.Matches(k, m.Keys.Delete):
		if r, ok := m.current(); ok {
			m.confirm = r.ID
		}
	case key.Matches(k, m.Keys.Open):
		if r, ok := m.current(); ok {
			doc, err := m.load(r.ID)
			if err != nil {
				m.status = "✗ " + err.Error()
				return m, nil
			}
			failed := ""
			if r.Failed {
				failed = strings.TrimPrefix(strings.SplitN(r.Headline, " · ", 2)[0], "failed: ")
			}
			return m, func() tea.Msg { return OpenMsg{ID: r.ID, Doc: doc, Failed: failed} }
		}
	case key.Matches(k, m.Keys.Compare):
		return m.compare()
	default:
		m.tab, _ = m.tab.Update(k)
	}
	return m, nil
}

func (m Model) load(id string) (result.Document, error) {
	if m.store == nil {
		return result.Document{}, errors.New("no results store")
	}
	d, err := m.store.Load(id)
	if err != nil {
		return d, fmt.Errorf("load %s: %w", id, err)
	}
	return d, nil
}

func (m Model) compare() (Model, tea.Cmd) {
	if len(m.selected) < 2 {
		m.status = "✗ select two or more runs with space, then press c"
		return m, nil
	}
	var docs []result.Document
	for _, id := range m.selected {
		d, err := m.load(id)
		if err != nil {
			m.status = "✗ " + err.Error()
			return m, nil
		}
		docs = append(docs, d)
	}
	return m, func() tea.Msg { return CompareMsg{Docs: docs} }
}

func (m Model) confirmKey(k tea.KeyPressMsg) Model {
	id := m.confirm
	m.confirm = ""
	if !key.Matches(k, m.Keys.Yes) {
		m.status = "kept " + id
		return m
	}
	if m.store == nil {
		m.status = "✗ no results store"
		return m
	}
	if err := m.store.Delete(id); err != nil {
		m.status = "✗ delete " + id + ": " + err.Error()
		return m
	}
	m.Reload()
	m.status = "deleted " + id
	return m
}

func (m *Model) filterKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.filtering = false
	case "esc":
		m.filtering, m.filter = false, ""
	case "backspace":
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	default:
		if k.Text != "" {
			m.filter += k.Text
		}
	}
	m.apply()
}

// Footer returns the bindings the footer shows now.
func (m Model) Footer() []key.Binding {
	switch {
	case m.confirm != "":
		return []key.Binding{m.Keys.Yes, key.NewBinding(key.WithKeys("n"), key.WithHelp("any other key", "keep"))}
	case m.filtering:
		return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear"))}
	}
	return []key.Binding{m.Keys.Up, m.Keys.Select, m.Keys.Compare, m.Keys.Open, m.Keys.Delete, m.Keys.Filter}
}

// View renders the status line, the filter and the table.
func (m Model) View() string {
	t := m.theme
	head := fmt.Sprintf(" %d runs", len(m.runs))
	if m.Note != "" {
		head += " (" + m.Note + ")"
	}
	if m.filter != "" || m.filtering {
		head += fmt.Sprintf(" · %d shown", len(m.shown))
	}
	head += fmt.Sprintf(" · %d selected", len(m.selected))
	switch {
	case m.confirm != "":
		head = t.Warn.Render(fmt.Sprintf(" ! delete run %s? y deletes, any other key keeps it", m.confirm))
	case m.status != "":
		head += " · " + m.status
	}
	filter := " / filter"
	if h := slices.DeleteFunc(m.tab.Hidden(), func(s string) bool { return s == "" }); len(h) > 0 && len(m.runs) > 0 {
		filter += fmt.Sprintf(" · %d columns hidden · %s · a wider terminal shows them", len(h), strings.Join(h, ", "))
	}
	filter = t.Dim.Render(filter)
	if m.filtering {
		filter = " filter: " + m.filter + "_"
	} else if m.filter != "" {
		filter = " filter: " + m.filter + t.Dim.Render("  (esc clears)")
	}
	var body string
	switch {
	case m.store == nil:
		body = " No results store: runs are not kept."
	case len(m.runs) == 0:
		body = " No runs yet: every run you finish (or stop) is kept here."
	default:
		body = m.tab.View()
	}

	out := head + "\n" + filter + "\n" + panel.Box(t, "History", body, m.w, m.h-2)
	return strings.Join(panel.Lines(out, m.w, m.h), "\n")
}

// Select adds the run id to the selection (when listed and not selected yet).
func (m *Model) Select(id string) {
	if !slices.Contains(m.selected, id) && slices.ContainsFunc(m.runs, func(r Run) bool { return r.ID == id }) {
		m.selected = append(m.selected, id)
		m.apply()
	}
}

// SetStatus shows s on the status line.
func (m *Model) SetStatus(s string) { m.status = s }
