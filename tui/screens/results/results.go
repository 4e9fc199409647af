// Package results is the Results screen: the finished (or stopped) run's own table in
// its familiar shape, reusing workloads/report: llama-bench's markdown table for bench,
// vLLM's result block for serve-bench (a sweep adds its table first), TGI's tables
// for batch and JetStream's for throughput (each row's vLLM block after it). From here a
// run is exported (e), saved as a profile (s), compared with the run before it (c) or
// run again (r).
package results

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/columns"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/prompt"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
)

// CompareMsg asks the root to compare the run shown with the run before it.
type CompareMsg struct{ ID string }

// KeyMap holds the Results screen's keys.
type KeyMap struct {
	Up, Down, Left, Right, Export, Save, Compare, Again key.Binding
}

// DefaultKeyMap returns the Results keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑↓", "scroll")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "scroll down")),
		Left:    key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←→", "scroll sideways")),
		Right:   key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "scroll right")),
		Export:  key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "export")),
		Save:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save profile")),
		Compare: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "compare")),
		Again:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "run again")),
	}
}

// Help returns every binding for the help view.
func (k KeyMap) Help() []key.Binding {
	long := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	return []key.Binding{long(k.Export, "export (.md .csv .json .html: tab cycles the format)"),
		long(k.Save, "save the setup as a profile (YAML)"),
		long(k.Compare, "compare with the previous run of the same kind (or pick in History)"),
		long(k.Again, "run the same setup again"), k.Up, k.Left}
}

// pathPrompt is a path being typed for an export or a profile.
type pathPrompt struct {
	what string // "export" or "profile"
	*prompt.Model
}

// Model is the Results screen.
type Model struct {
	theme  theme.Theme
	w, h   int
	Keys   KeyMap
	Title  string
	text   string
	status string
	note   string // outcome of the last export or save
	offset int
	col    int // first column shown

	doc    result.Document
	has    bool
	id     string        // the store's id of the run ("" when not stored)
	config *setup.Config // the setup it ran from (nil when opened from History)
	save   func(setup.Config, string) error
	prompt *pathPrompt
}

// New returns an empty Results screen; save writes a profile (nil: this build cannot).
func New(t theme.Theme, save func(c setup.Config, path string) error) Model {
	return Model{theme: t, Keys: DefaultKeyMap(), w: 80, h: 22, save: save}
}

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Show shows doc: id is the store's id ("" when not stored), config the setup it ran
// from (nil when unknown), failed the run's error, elapsed its duration (0 when
// unknown).
func (m *Model) Show(doc result.Document, id string, config *setup.Config, failed error, elapsed time.Duration) {
	m.doc, m.has, m.id, m.config, m.prompt, m.note = doc, true, id, config, nil, ""
	m.Title, m.offset, m.col = doc.Title, 0, 0
	var b bytes.Buffer
	var err error
	switch {
	case doc.Bench != nil && len(doc.Bench.Records) > 0:
		err = report.LlamaBenchMarkdown(&b, doc.Bench)
	case doc.Kernels != nil:
		err = report.KernelsText(&b, doc.Kernels)
	case doc.Batch != nil && len(doc.Batch.Points) > 0:
		err = report.TGIReport(&b, doc.Batch)
	case doc.Throughput != nil && len(doc.Throughput.Rows) > 0:
		err = throughputReport(&b, doc)
	case doc.Throughput != nil:
		b.WriteString("no row finished")
	case len(doc.Serving) > 1:
		err = report.VLLMSweepTable(&b, doc.Serving)
		for _, p := range doc.Serving {
			if err == nil {
				b.WriteString("\n")
				err = report.VLLMBlock(&b, p)
			}
		}
	case len(doc.Serving) == 1:
		err = report.VLLMBlock(&b, doc.Serving[0])
	case doc.Bench != nil:
		b.WriteString("no test finished")
	default:
		b.WriteString("no result")
	}
	if err != nil {
		fmt.Fprintf(&b, "\nreport: %v", err)
	}
	m.text = strings.TrimRight(b.String(), "\n")
	switch {
	case failed != nil:
		m.status = "✗ failed: " + failed.Error()
	case doc.Partial:
		m.status = "■ stopped early: partial results"
	default:
		m.status = "✓ finished"
	}
	if elapsed > 0 {
		m.status += " in " + Duration(elapsed)
	}
	if !doc.Started.IsZero() {
		m.status += " · started " + doc.Started.Local().Format("2006-01-02 15:04:05")
	}
}

// SetNote shows s above the report until the next key (the root's news about the
// run shown, e.g. that a queue is held).
func (m *Model) SetNote(s string) { m.note = s }

// Document returns the run shown and whether there is one.
func (m Model) Document() (result.Document, bool) { return m.doc, m.has }

// SetID records the store's id of the run shown (after the root saved it).
func (m *Model) SetID(id string) { m.id = id }

// Capturing reports whether keys go to a path being typed.
func (m Model) Capturing() bool { return m.prompt != nil }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// defaultName is a file name for the run in the current folder: kind, model, start.
func (m Model) defaultName(ext string) string {
	s := result.Summarize(m.doc)
	name := s.Kind + "-" + s.Model
	if !m.doc.Started.IsZero() {
		name += "-" + m.doc.Started.Local().Format("20060102-150405")
	}
	name = strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-")
	return "." + string(filepath.Separator) + name + ext
}

// Update scrolls, runs the screen's keys and edits a path prompt.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if m.prompt != nil {
		return m.promptKey(msg), nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	n := len(strings.Split(m.text, "\n"))
	switch {
	case key.Matches(k, m.Keys.Up):
		m.offset = max(0, m.offset-1)
	case key.Matches(k, m.Keys.Down):
		m.offset = min(max(0, n-(m.h-3)), m.offset+1)
	case key.Matches(k, m.Keys.Left):
		m.col = max(0, m.col-1)
	case key.Matches(k, m.Keys.Right):
		if _, more := columns.Fit(m.text, m.w-2, m.col); more {
			m.col++
		}
	case !m.has:
		m.note = "✗ no run to act on yet"
	case key.Matches(k, m.Keys.Export):
		m.prompt = &pathPrompt{"export", prompt.New("export to", m.defaultName(".md"))}
	case key.Matches(k, m.Keys.Save):
		switch {
		case m.save == nil:
			m.note = "✗ this build cannot save profiles"
		case m.config == nil:
			m.note = "✗ only runs started on the Setup screen can be saved as a profile"
		default:
			m.prompt = &pathPrompt{"profile", prompt.New("save profile to", m.defaultName(".yaml"))}
		}
	case key.Matches(k, m.Keys.Compare):
		id := m.id
		return m, func() tea.Msg { return CompareMsg{ID: id} }
	case key.Matches(k, m.Keys.Again):
		if m.config == nil {
			m.note = "✗ only runs started on the Setup screen can be run again"
			return m, nil
		}
		c := *m.config
		return m, func() tea.Msg { return setup.RunMsg{Config: c} }
	}
	return m, nil
}

func (m Model) promptKey(msg tea.Msg) Model {
	p := *m.prompt
	cp := *p.Model
	p.Model = &cp
	m.prompt = &p
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "tab" {
		if p.what == "export" { // cycle the format
			exts := report.ExportFormats()
			cur := filepath.Ext(p.Text)
			i := (slices.Index(exts, cur) + 1) % len(exts)
			p.SetText(strings.TrimSuffix(p.Text, cur) + exts[i])
		}
		return m
	}
	switch p.Update(msg) {
	case prompt.Cancelled:
		m.prompt, m.note = nil, "cancelled"
	case prompt.Submitted:
		m.prompt = nil
		var err error
		if p.what == "export" {
			err = report.Export(p.Text, m.doc)
		} else {
			err = m.save(*m.config, p.Text)
		}
		if err != nil {
			m.note = "✗ " + err.Error()
		} else {
			m.note = "✓ " + map[string]string{"export": "exported to ", "profile": "profile saved to "}[p.what] + p.Text
		}
	}
	return m
}

// Footer returns the bindings the footer shows now.
func (m Model) Footer() []key.Binding {
	if m.prompt != nil {
		b := prompt.Footer("write")
		if m.prompt.what == "export" {
			b = append(b, key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "format")))
		}
		return b
	}
	if !m.has {
		return nil
	}
	return []key.Binding{m.Keys.Export, m.Keys.Save, m.Keys.Compare, m.Keys.Again, m.Keys.Up, m.Keys.Left}
}

// View renders the status line and the report in a frame.
func (m Model) View() string {
	if !m.has {
		return strings.Join(panel.Lines(" No results yet: run something from the Setup screen,\n or open a past run on the History screen.", m.w, m.h), "\n")
	}
	lines, more := columns.Fit(m.text, m.w-2, m.col)
	lines = lines[min(m.offset, len(lines)):]
	hint := ""
	switch {
	case more && m.col > 0:
		hint = "←→ more columns"
	case more:
		hint = "→ more columns"
	case m.col > 0:
		hint = "← more columns"
	}
	top := " " + m.status
	if hint != "" { // before the start time: FitParts drops from the end
		first, rest, _ := strings.Cut(m.status, " · ")
		top = " " + strings.Join(slices.DeleteFunc([]string{first, hint, rest}, func(s string) bool { return s == "" }), " · ")
	}
	switch {
	case m.prompt != nil && m.prompt.what == "export":
		top = m.prompt.View() + "  " + m.theme.Dim.Render("("+strings.Join(report.ExportFormats(), " ")+")")
	case m.prompt != nil:
		top = m.prompt.View()
	case m.note != "": // the outcome of the last key first: the status is older news
		top = " " + m.note + " ·" + top
	}
	body := panel.FitParts(top, m.w) + "\n" + panel.Box(m.theme, m.Title, strings.Join(lines, "\n"), m.w, m.h-1)
	return strings.Join(panel.Lines(body, m.w, m.h), "\n")
}

// Duration says how long a run took with the precision that suits it: "48 ms",
// "3.2 s", "2 min 05 s" (a run of a few milliseconds is not "0.0 s").
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", max(1, d.Round(time.Millisecond).Milliseconds()))
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// throughputReport is a throughput run's JetStream table (output tok/s per row, then
// weights, KV cache, the rolling window and the requests of each; aligned, so that
// the screen shows whole columns), whether the rolling window was used, then each
// row's serving point as vLLM prints it, under the row's name.
func throughputReport(b *bytes.Buffer, doc result.Document) error {
	t := doc.Throughput
	if err := report.JetStreamTableAligned(b, t); err != nil {
		return err
	}
	// the window in a line of its own (as the run logs it): it wraps, never scrolls away
	fmt.Fprintf(b, "\n%s\n", t.Spec.RollingWindowNote())
	for i, p := range doc.Serving {
		name := fmt.Sprintf("row %d", i+1)
		if i < len(t.Rows) {
			name = t.Rows[i].Dtype
		}
		fmt.Fprintf(b, "\n%s:\n", name)
		if err := report.VLLMBlock(b, p); err != nil {
			return err
		}
	}
	return nil
}
