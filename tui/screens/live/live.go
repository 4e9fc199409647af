// Package live is the Live screen: it starts a workload through run.Start in a
// tea.Cmd, reads the run's events with one re-armed command per event (the pattern of
// bubbletea's examples/realtime), and shows progress and ETA, a throughput sparkline,
// a streaming latency histogram, a percentiles table, the device panel and the log
// tail; a kernel suite shows its cases (state and time of each) and the latest
// section it completed instead. esc cancels; the run still ends with a Done that
// keeps partial results.
package live

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"llmbench/tui/components/columns"
	"llmbench/tui/components/histogram"
	"llmbench/tui/components/panel"
	"llmbench/tui/components/progress"
	"llmbench/tui/components/sparkline"
	"llmbench/tui/components/table"
	"llmbench/tui/components/telemetry"
	"llmbench/tui/theme"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
	"llmbench/workloads/run"
	hw "llmbench/workloads/telemetry"
)

// Kind selects the views of a run.
type Kind int

const (
	// BenchRun is llama-bench's tests: t/s per repetition, the tests' table, the
	// repetitions' latency histogram.
	BenchRun Kind = iota
	// ServeRun is a serving benchmark: output tok/s, percentiles, the TTFT/TPOT/ITL
	// histograms.
	ServeRun
	// KernelsRun is a kernel suite: its cases and the latest section it completed.
	KernelsRun
	// ThroughputRun is a JetStream-style throughput run: a serving point per row, its
	// rows (requests, output tok/s) in place of the percentiles.
	ThroughputRun
)

// DoneMsg says the run ended (finished, failed or cancelled): Done holds its result.
type DoneMsg struct {
	Title string
	Done  run.Done
}

// startedMsg carries the run Start returned.
type startedMsg struct {
	run    *run.Run
	events <-chan run.Event
}

// startCmd starts w; the run lives until its Done, whatever the screen does.
func startCmd(w run.Workload, opts []run.Option) tea.Cmd {
	return func() tea.Msg {
		r, ch := run.Start(context.Background(), w, opts...)
		return startedMsg{run: r, events: ch}
	}
}

// Frame pacing: the screen takes the run's events in batches at most every
// minFrame (so a run that publishes fast costs the terminal at most 1/minFrame
// renders a second, and the run's latest-wins channel coalesces the rest), and
// redraws at least every maxFrame even when nothing arrives (the clock and ETA move),
// so the screen updates between 1/maxFrame and 1/minFrame times a second.
const (
	minFrame = 100 * time.Millisecond
	maxFrame = 200 * time.Millisecond
)

// batchMsg is what one read of the run's channel brought: the events waiting (none
// when the frame timer fired first), and whether the channel closed.
type batchMsg struct {
	ch     <-chan run.Event // the channel it was read from: stale ones are ignored
	events []run.Event
	closed bool
}

// readCmd waits until minFrame after last, then returns every event that arrived,
// waiting up to maxFrame for the first; a Done ends the batch. Update re-arms it.
func readCmd(ch <-chan run.Event, last time.Time) tea.Cmd {
	return func() tea.Msg {
		if d := minFrame - time.Since(last); d > 0 {
			time.Sleep(d)
		}
		timer := time.NewTimer(max(0, maxFrame-time.Since(last)))
		defer timer.Stop()
		b := batchMsg{ch: ch}
		take := func(ev run.Event, ok bool) (more bool) {
			if !ok {
				b.closed = true
				return false
			}
			b.events = append(b.events, ev)
			_, done := ev.(run.Done)
			return !done
		}
		select {
		case ev, ok := <-ch:
			if !take(ev, ok) {
				return b
			}
		case <-timer.C:
			return b
		}
		for {
			select {
			case ev, ok := <-ch:
				if !take(ev, ok) {
					return b
				}
			default:
				return b
			}
		}
	}
}

// KeyMap holds the Live screen's keys.
type KeyMap struct {
	Stop, TTFT, TPOT, ITL, Pause key.Binding
}

// DefaultKeyMap returns the Live keys (short words: the footer has 80 cells; Help
// says more).
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Stop:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop, keep partial")),
		TTFT:  key.NewBinding(key.WithKeys("t"), key.WithHelp("t/p/i", "chart")),
		TPOT:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "histogram TPOT")),
		ITL:   key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "histogram ITL")),
		Pause: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause")),
	}
}

// Footer returns the bindings the footer shows now.
func (m Model) Footer() []key.Binding {
	if !m.Running() {
		return nil
	}
	pause := m.Keys.Pause
	if m.paused {
		pause = key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "resume"))
	}
	if m.serving {
		return []key.Binding{m.Keys.Stop, m.Keys.TTFT, pause}
	}
	return []key.Binding{m.Keys.Stop, pause}
}

// Help returns every binding, with a fuller description, for the help view.
func (k KeyMap) Help() []key.Binding {
	long := func(b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, desc))
	}
	return []key.Binding{long(k.Stop, "stop the run (keeps partial results)"),
		long(k.TTFT, "histogram of TTFT / TPOT / ITL (serve-bench)"),
		long(k.Pause, "pause or resume the view (the run goes on)")}
}

var metricNames = []string{"ttft", "tpot", "itl"}

// maxLogs bounds the log lines kept.
const maxLogs = 100

// Model is the Live screen.
type Model struct {
	theme theme.Theme
	w, h  int
	Keys  KeyMap

	Title   string
	serving bool
	kernels bool
	run     *run.Run
	events  <-chan run.Event
	started bool
	done    *run.Done
	stopped bool // esc pressed

	paused    bool      // space: the view is frozen, the run goes on
	frozen    string    // the view when it was paused
	startedAt time.Time // wall clock when the run started (for the clock between events)
	lastRead  time.Time // when the last batch was read
	frames    int       // screen updates during the run (batches and frame ticks)

	prog   progress.Model
	thr    sparkline.Model
	hist   histogram.Model
	metric int // index into metricNames (serve-bench)
	pct    table.Model
	tele   telemetry.Model
	logs   []run.Log

	lastSnap   metrics.LiveSnapshot
	lastSnapAt time.Duration
	// peak is the largest 1-s bucket of output tokens so far (Results' peak), over
	// every sweep point; pointPeak that of the points before this one.
	peak, pointPeak float64
	reps            map[string][]float64 // bench: t/s per repetition by test
	order           []string
	// kernels: the cases seen so far in order, and the latest section completed
	// (nil before the first).
	cases   []kernelCase
	section *kernelbench.Section
	// throughput: the rows, the one running (-1 before the first) and their table
	throughput bool
	tput       []tputRow
	tputAt     int
	rowsT      table.Model
}

// kernelCase is one case of a kernel suite as Live saw it: its name, where it is
// ("warmup", "round 2/3"; "" when the suite says no more), and when it started and
// ended (end < 0 while it runs).
type kernelCase struct {
	name, state string
	start, end  time.Duration
}

// New returns an idle Live screen; Start begins a run on it.
func New(t theme.Theme) Model {
	m := Model{theme: t, Keys: DefaultKeyMap(), prog: progress.New(t), thr: sparkline.New(t, "t/s"),
		hist: histogram.New(t, "ms"), tele: telemetry.New(t), pct: table.New(t), w: 80, h: 22}
	return m
}

// Start resets the screen for a run of w titled title (kind selects the views) and
// returns the command that starts it.
func (m Model) Start(title string, kind Kind, w run.Workload, note string, opts ...run.Option) (Model, tea.Cmd) {
	n := New(m.theme)
	n.Title, n.serving, n.kernels, n.started = title, kind == ServeRun || kind == ThroughputRun, kind == KernelsRun, true
	n.throughput, n.tputAt, n.rowsT = kind == ThroughputRun, -1, n.newRowsTable()
	n.tele.Note = note
	n.reps = map[string][]float64{}
	switch kind {
	case ServeRun, ThroughputRun:
		n.pct = table.New(m.theme, "ms", "mean", "p50", "p90", "p99")
		n.pct.Priority = []int{0, 1, 2, 4, 3} // narrow: p90 goes first
	case KernelsRun:
		n.pct = table.New(m.theme, "case", "state", "time")
		n.pct.Priority = []int{0, 2, 1}
	default:
		n.pct = table.New(m.theme, "test", "reps", "mean t/s", "± std", "max")
		n.pct.Priority = []int{0, 2, 3, 1, 4}
	}
	n.SetSize(m.w, m.h)
	return n, startCmd(w, opts)
}

// Cancel stops the run, if one is under way; it still ends with a Done.
func (m *Model) Cancel() {
	if m.Running() && m.run != nil {
		m.stopped = true
		m.run.Cancel()
	}
}

// Running reports whether a run is under way (started and not yet Done).
func (m Model) Running() bool { return m.started && m.done == nil }

// SetSize sets the area the screen draws in and lays the components out (a paused
// view is drawn again at the new size from what the run has published since).
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	defer func() {
		if m.paused {
			m.frozen = m.render()
		}
	}()
	lw := w / 2
	rw := w - lw
	l := layoutFor(h)
	m.prog.SetSize(w, 2)
	m.thr.SetSize(lw-2, l.thr-2)
	m.pct.SetSize(m.pctSize())
	m.rowsT.SetSize(m.pctSize())
	m.hist.SetSize(rw-2, l.avail-l.dev-2)
	m.tele.SetSize(rw-2, l.dev-2)
	if m.kernels {
		m.tele.SetSize(rw-2, kernelTop(l)-2)
		m.setCases() // as many of the latest cases as fit now
	}
}

// kernelTop is the height of a kernel suite's top row of panels (the cases beside the
// device) in l: two fifths of the rows, at least the device panel's; the latest
// section, as wide as the screen (its tables are), gets the rest.
func kernelTop(l layout) int { return max(l.dev, l.avail*2/5) }

// pctSize is the size of the table inside its box: under the throughput box, or the
// top left for a kernel suite (no throughput).
func (m Model) pctSize() (w, h int) {
	l := layoutFor(m.h)
	if m.kernels {
		return m.w/2 - 2, kernelTop(l) - 2
	}
	return m.w/2 - 2, l.avail - l.thr - 2
}

// layout is how the Live screen's rows are shared: panels (avail rows: throughput
// box thr, device box dev, the rest to the percentiles and the histogram) and the
// log lines under them.
type layout struct{ avail, thr, dev, logs int }

// layoutFor shares h rows: from 16 rows, two log lines, a throughput box with its
// peak and mean line and a device box of a third; below that (60×15) the log lines
// and the peak line go first, so the percentiles and the histogram keep their rows.
func layoutFor(h int) layout {
	if h >= 16 {
		avail := max(6, h-2-2)
		return layout{avail: avail, thr: 4, dev: devHeight(avail), logs: 2}
	}
	avail := max(6, h-2)
	return layout{avail: avail, thr: 3, dev: min(4, avail/2), logs: 0}
}

// Update handles keys and the run's messages.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case startedMsg:
		m.run, m.events = msg.run, msg.events
		m.startedAt, m.lastRead = time.Now(), time.Now()
		return m, readCmd(msg.events, m.lastRead)
	case batchMsg:
		if msg.ch != m.events || !m.Running() {
			return m, nil
		}
		m.frames++
		m.lastRead = time.Now()
		if len(msg.events) == 0 && !msg.closed && !m.startedAt.IsZero() { // frame tick: the clock moves
			m.prog.Elapsed = max(m.prog.Elapsed, time.Since(m.startedAt))
		}
		for _, ev := range msg.events {
			if d, ok := ev.(run.Done); ok {
				m.finish(d)
				return m, func() tea.Msg { return DoneMsg{Title: m.Title, Done: d} }
			}
			m.apply(ev)
		}
		if msg.closed {
			return m, nil
		}
		return m, readCmd(m.events, m.lastRead)
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, m.Keys.Stop) && m.Running() && m.run != nil:
			m.stopped = true
			m.run.Cancel()
		case key.Matches(msg, m.Keys.Pause) && m.started:
			m.paused = !m.paused
			if m.paused {
				m.frozen = m.render()
			}
		case m.serving && key.Matches(msg, m.Keys.TTFT):
			m.setMetric(0)
		case m.serving && key.Matches(msg, m.Keys.TPOT):
			m.setMetric(1)
		case m.serving && key.Matches(msg, m.Keys.ITL):
			m.setMetric(2)
		}
	}
	return m, nil
}

// Frames returns how many times the screen updated during the run (event batches
// and frame ticks): between 1/maxFrame and 1/minFrame a second.
func (m Model) Frames() int { return m.frames }

// Paused reports whether the view is paused.
func (m Model) Paused() bool { return m.paused }

func (m *Model) finish(d run.Done) {
	m.done = &d
	m.paused = false
	if m.throughput {
		m.setTputRows() // a row still running stopped with the run
	}
	m.prog.Finished = !d.Partial && d.Err == nil
	m.prog.Elapsed = d.Elapsed
	if n := len(m.cases); n > 0 && m.cases[n-1].end < 0 {
		m.cases[n-1].end = d.Elapsed
		if d.Partial || d.Err != nil {
			m.cases[n-1].state = "stopped"
		}
		m.setCases()
	}
	switch {
	case d.Err != nil:
		m.log(d.Elapsed, "run failed: "+d.Err.Error())
	case d.Partial:
		m.log(d.Elapsed, "stopped: partial results kept")
	default:
		m.log(d.Elapsed, "finished")
	}
}

func (m *Model) log(at time.Duration, s string) {
	m.logs = append(m.logs, run.Log{At: at, Text: s})
	if len(m.logs) > maxLogs {
		m.logs = m.logs[len(m.logs)-maxLogs:]
	}
}

func (m *Model) apply(ev run.Event) {
	switch e := ev.(type) {
	case run.Progress:
		m.prog.Done, m.prog.Total, m.prog.Unit, m.prog.Label, m.prog.Elapsed = e.Done, e.Total, e.Unit, e.Label, e.At
	case run.Output:
		switch d := e.Data.(type) {
		case kernelbench.Section:
			m.section = &d
		case kernelbench.Event: // every step, in order (Progress keeps only the latest)
			m.prog.Elapsed = max(m.prog.Elapsed, e.At)
			m.addCase(e.At, d.Case)
		}
	case run.Log:
		m.log(e.At, e.Text)
	case run.Telemetry:
		if r, ok := e.Data.(hw.Reading); ok {
			m.tele.Set(r)
		}
	case run.Snapshot:
		m.prog.Elapsed = max(m.prog.Elapsed, e.At)
		switch s := e.Data.(type) {
		case micro.RepSnapshot:
			m.addRep(s)
		case micro.BatchSnapshot:
			m.addRep(s.Rep())
		case metrics.LiveSnapshot:
			m.addLive(e.At, s)
		}
	}
	if m.throughput {
		m.tputApply(ev)
	}
}

// addCase follows a kernel suite's step label: "causal · round 2/3" (case and
// where it is), "causal done", a case name alone (paged-attention), "calibrating the
// crossover" (a step before the cases); "" and "done" end the last case.
func (m *Model) addCase(at time.Duration, label string) {
	name, state, _ := strings.Cut(label, " · ")
	finished := false
	if n, ok := strings.CutSuffix(name, " done"); ok {
		name, finished = n, true
	}
	last := len(m.cases) - 1
	if last >= 0 && m.cases[last].name == name {
		m.cases[last].state = state
	} else {
		if last >= 0 && m.cases[last].end < 0 {
			m.cases[last].end, m.cases[last].state = at, ""
		}
		if name != "" && name != "done" {
			m.cases = append(m.cases, kernelCase{name: name, state: state, start: at, end: -1})
		}
	}
	if last = len(m.cases) - 1; finished && last >= 0 {
		m.cases[last].end, m.cases[last].state = at, ""
	}
	m.setCases()
}

// setCases shows the cases in the table: the latest that fit its rows.
func (m *Model) setCases() {
	var rows [][]string
	for _, c := range m.cases {
		state, end := "✓ done", c.end
		switch {
		case c.end < 0:
			state, end = cmp.Or(c.state, "running"), m.prog.Elapsed
		case c.state != "":
			state = c.state
		}
		rows = append(rows, []string{c.name, state, fmt.Sprintf("%.1f s", (end - c.start).Seconds())})
	}
	_, h := m.pctSize()
	m.pct.SetRows(rows[max(0, len(rows)-max(1, h-1)):])
}

func (m *Model) addRep(s micro.RepSnapshot) {
	ts := s.TokensPerSec()
	m.thr.Push(ts)
	m.hist.Add(float64(s.Elapsed) / float64(time.Millisecond))
	if _, ok := m.reps[s.Test]; !ok {
		m.order = append(m.order, s.Test)
	}
	m.reps[s.Test] = append(m.reps[s.Test], ts)
	var rows [][]string
	for _, t := range m.order {
		v := m.reps[t]
		mean, std := meanStd(v)
		rows = append(rows, []string{t, fmt.Sprint(len(v)), fmt.Sprintf("%.2f", mean), fmt.Sprintf("%.2f", std), fmt.Sprintf("%.2f", slices.Max(v))})
	}
	m.pct.SetRows(rows)
}

func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)-1))
}

func (m *Model) addLive(at time.Duration, s metrics.LiveSnapshot) {
	// tokens since the last snapshot (the run's start for the first); a sweep's next
	// point counts from zero again
	prev := m.lastSnap.OutputTokens
	if s.OutputTokens < prev {
		prev, m.pointPeak = 0, m.peak
	}
	if dt := (at - m.lastSnapAt).Seconds(); dt > 0 {
		m.thr.Push(float64(s.OutputTokens-prev) / dt)
		m.peak = max(m.pointPeak, s.PeakOutputTokensPerS, m.peak)
		m.thr.SetPeak(m.peak, "1-s peak") // the sparkline's rates are per snapshot
	}
	m.lastSnap, m.lastSnapAt = s, at
	m.prog.Failed = s.Failed
	var rows [][]string
	for _, name := range append(slices.Clone(metricNames), "e2el") {
		d := s.Dists[name]
		if s.NonStreaming && name != "e2el" { // --non-streaming: not measured
			rows = append(rows, []string{strings.ToUpper(name), "n/a", "n/a", "n/a", "n/a"})
			continue
		}
		if d.Count == 0 {
			rows = append(rows, []string{strings.ToUpper(name), "-", "-", "-", "-"})
			continue
		}
		f := func(v float64) string { return fmt.Sprintf("%.1f", v) }
		rows = append(rows, []string{strings.ToUpper(name), f(d.Mean), f(d.P50), f(d.P90), f(d.P99)})
	}
	m.pct.SetRows(rows)
	m.setMetric(m.metric)
}

func (m *Model) setMetric(i int) {
	m.metric = i
	d := m.lastSnap.Dists[metricNames[i]]
	bs := make([]histogram.Bucket, len(d.Buckets))
	for j, b := range d.Buckets {
		bs[j] = histogram.Bucket{Lo: b.FromMs, Hi: b.ToMs, Count: b.Count}
	}
	m.hist.SetBuckets(bs, d.P50, d.P90, d.P99)
}

// Done returns the run's Done once it ended.
func (m Model) Done() (run.Done, bool) {
	if m.done == nil {
		return run.Done{}, false
	}
	return *m.done, true
}

// HeaderRight is the run summary for the header: how the run stands first (so a
// narrow header cuts the title, not the state), then the title.
func (m Model) HeaderRight() string {
	switch {
	case !m.started:
		return ""
	case m.done != nil && m.done.Err != nil:
		return "✗ failed · " + m.Title
	case m.done != nil && m.done.Partial:
		return "■ stopped (partial) · " + m.Title
	case m.done != nil:
		return "✓ done · " + m.Title
	case m.stopped:
		return "stopping… · " + m.Title
	case m.paused:
		return "❚❚ view paused, run going on · " + m.Title
	}
	return "● running · " + m.Title
}

// View renders the screen (as it was when paused, while the view is paused).
func (m Model) View() string {
	if m.paused {
		return m.frozen
	}
	return m.render()
}

func (m Model) render() string {
	t := m.theme
	if !m.started {
		return strings.Join(panel.Lines(" No run yet: set one up on the Setup screen and press enter.", m.w, m.h), "\n")
	}
	lw := m.w / 2
	rw := m.w - lw
	l := layoutFor(m.h)
	avail, devH := l.avail, l.dev
	thrTitle, histTitle, pctTitle := "Throughput (t/s per rep)", "Rep latency histogram (ms)", "Tests"
	if m.serving {
		thrTitle, pctTitle = "Output tok/s", "Percentiles (ms)"
		tabs := make([]string, len(metricNames))
		for i, n := range metricNames {
			tabs[i] = strings.ToUpper(n)
			if i == m.metric {
				tabs[i] = "[" + tabs[i] + "]"
			}
		}
		histTitle = strings.ToUpper(metricNames[m.metric]) + " histogram (ms) " + strings.Join(tabs, " ")
	}
	pctView := m.pct.View()
	if m.throughput {
		pctTitle, pctView = "Rows", m.rowsT.View()
	}
	left := panel.Stack(panel.Box(t, thrTitle, m.thr.View(), lw, l.thr), panel.Box(t, pctTitle, pctView, lw, avail-l.thr))
	right := panel.Stack(panel.Box(t, histTitle, m.hist.View(), rw, avail-devH), panel.Box(t, m.tele.Title(), m.tele.View(), rw, devH))
	top := panel.Join(left, right)
	if m.kernels {
		title, text := "Latest section", " none yet: each case's table shows here when it completes"
		if s := m.section; s != nil {
			// the panel's title names the section: its own title box is left out
			title, text = "Latest section: "+s.Title, strings.TrimRight(strings.TrimPrefix(s.Text, kernelbench.Box(s.Title)), "\n")
			// whole columns of a table wider than the screen, never a cut figure
			lines, _ := columns.Fit(text, m.w-2, 0)
			text = strings.Join(lines, "\n")
		}
		done := 0
		for _, c := range m.cases {
			if c.end >= 0 && c.state == "" {
				done++
			}
		}
		th := kernelTop(l)
		top = panel.Stack(panel.Join(panel.Box(t, fmt.Sprintf("Cases (%d done)", done), m.pct.View(), lw, th),
			panel.Box(t, m.tele.Title(), m.tele.View(), rw, th)), panel.Box(t, title, text, m.w, avail-th))
	}
	var logs []string
	for _, e := range m.logs[max(0, len(m.logs)-l.logs):] {
		logs = append(logs, fmt.Sprintf(" log %s %s", progress.Clock(e.At), e.Text))
	}
	body := m.prog.View() + "\n" + top
	if l.logs > 0 {
		body += "\n" + strings.Join(panel.Lines(strings.Join(logs, "\n"), m.w, l.logs), "\n")
	}
	return strings.Join(panel.Lines(body, m.w, m.h), "\n")
}

// devHeight is the Device panel's height (frame included) for the rows available:
// four lines inside, five or six when the terminal is tall.
func devHeight(avail int) int { return min(8, max(6, avail/3)) }
