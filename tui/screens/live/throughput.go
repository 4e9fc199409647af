package live

import (
	"fmt"
	"time"

	"llmbench/tui/components/table"
	"llmbench/workloads/jobs"
	"llmbench/workloads/metrics"
	"llmbench/workloads/run"
)

// tputRow is one row of a throughput run as Live follows it: its serving point's
// requests and output tokens per second (the mean since the point started while it
// runs, the point's own figure once it is done).
type tputRow struct {
	name                 string
	done, total          float64 // requests
	start                time.Duration
	tps                  float64
	running, ended, stop bool
}

// SetRowNames names the rows of a throughput run ("bfloat16", "int8"), in the order
// its serving points run; a point past them is named by its number.
func (m *Model) SetRowNames(names []string) {
	m.tput = make([]tputRow, len(names))
	for i, n := range names {
		m.tput[i].name = n
	}
	m.setTputRows()
}

// tputApply follows a throughput run's event: a point started or ended (the next row,
// its result), the requests of the row running, its tokens so far; the progress line
// names the row.
func (m *Model) tputApply(ev run.Event) {
	cur := func() *tputRow {
		if m.tputAt < 0 || m.tputAt >= len(m.tput) {
			return nil
		}
		return &m.tput[m.tputAt]
	}
	switch e := ev.(type) {
	case run.Output:
		switch d := e.Data.(type) {
		case jobs.PointStarted:
			m.tputAt++
			if m.tputAt >= len(m.tput) {
				m.tput = append(m.tput, tputRow{name: fmt.Sprintf("row %d", m.tputAt+1)})
			}
			r := cur()
			r.start, r.running = e.At, true
		case jobs.PointDone:
			if r := cur(); r != nil && d.Result != nil {
				s := d.Result.Summary
				r.tps, r.done, r.total, r.running, r.ended = s.OutputThroughput, float64(s.Completed), float64(d.Result.Requests), false, true
				r.stop = d.Result.Partial
			}
		}
	case run.Progress:
		if r := cur(); r != nil && r.running && e.Unit == "requests" {
			r.done, r.total = e.Done, e.Total
			m.prog.Label = fmt.Sprintf("row %d/%d %s", m.tputAt+1, len(m.tput), r.name)
		}
	case run.Snapshot:
		if s, ok := e.Data.(metrics.LiveSnapshot); ok {
			if r := cur(); r != nil && r.running {
				if dt := (e.At - r.start).Seconds(); dt > 0 {
					r.tps = float64(s.OutputTokens) / dt
				}
			}
		}
	}
	m.setTputRows()
}

// setTputRows shows the rows in their table: name, requests, output tok/s, state.
func (m *Model) setTputRows() {
	var rows [][]string
	for _, r := range m.tput {
		req, tps, state := "-", "-", "waiting"
		if r.total > 0 {
			req = fmt.Sprintf("%.0f/%.0f", r.done, r.total)
		}
		switch {
		case r.ended && r.stop:
			state = "stopped"
		case r.ended:
			state = "✓ done"
		case r.running && m.done != nil:
			state = "stopped"
		case r.running:
			state = "running"
		}
		if r.running || r.ended {
			tps = fmt.Sprintf("%.1f", r.tps)
		}
		rows = append(rows, []string{r.name, req, tps, state})
	}
	m.rowsT.SetRows(rows)
}

// newRowsTable is the throughput rows' table (narrow: the state goes first, then the
// requests).
func (m Model) newRowsTable() table.Model {
	t := table.New(m.theme, "dtype", "requests", "out tok/s", "state")
	t.Priority = []int{0, 2, 1, 3}
	return t
}
