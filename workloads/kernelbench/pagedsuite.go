package kernelbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"llmbench/workloads"
)

// runPagedSuite is the paged-attention suite as a Suite: RunPaged at spec's threads,
// repetitions and cases, its table (WritePagedTable) as the one section, its results
// as the report's data. Its checks fail the run under spec.Check; otherwise they are
// notes.
func runPagedSuite(ctx context.Context, spec workloads.KernelSpec, obs Observer) (*Report, error) {
	o := PagedOptions{Threads: spec.Threads, Reps: spec.Reps}
	if len(spec.Cases) > 0 {
		o.Cases = spec.Cases
	}
	pr, err := RunPaged(ctx, o, func(done, total int, name string) { obs(Event{Done: done, Total: total, Case: name}) })
	if pr == nil {
		return nil, err
	}
	rep, werr := PagedSuiteReport(spec, pr)
	if err == nil {
		err = werr
	}
	n := len(pr.Results)
	obs(Event{Done: n, Total: n, Case: "done", Section: &rep.Sections[0]})
	return rep, err
}

// PagedSuiteReport turns a paged-attention run into the suite's Report: its table
// (WritePagedTable) as the one section, its checks (spec.Check) or notes, its results
// as the report's data.
func PagedSuiteReport(spec workloads.KernelSpec, pr *PagedReport) (*Report, error) {
	table := *pr
	table.Checks = nil // the report prints them (Trailer)
	var b strings.Builder
	err := WritePagedTable(&b, &table)
	const title = "Paged Attention"
	numeric := make([]bool, len(PagedColumns))
	for i := 3; i <= 6; i++ {
		numeric[i] = true
	}
	rep := &Report{Spec: spec, Partial: pr.Partial, Sections: []Section{{Title: title, Text: Box(title) + b.String() + "\n",
		Table: &Table{Columns: PagedColumns, Numeric: numeric, Rows: pr.PagedRows()}}}}
	for _, c := range pr.Checks {
		if spec.Check {
			rep.Checks = append(rep.Checks, Check(c))
			continue
		}
		mark := "PASS"
		if !c.Pass {
			mark = "FAIL"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("check %s: %s: %s", mark, c.Name, c.Detail))
	}
	rep.Data, _ = json.Marshal(pr)
	return rep, err
}
