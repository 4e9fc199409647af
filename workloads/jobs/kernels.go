package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"llmbench/workloads/kernelbench"
	"llmbench/workloads/result"
)

// ErrCheckFailed is returned (wrapped) by a kernel job whose acceptance checks did
// not all pass; the run is kept and exported all the same.
var ErrCheckFailed = errors.New("acceptance check failed")

// kernels runs a kernel benchmark: progress per case, each section published (a
// headless front end prints it) and kept in the store as it completes, and every
// step of the suite published too (a kernelbench.Event without its section, after
// the section: Progress keeps only the latest, so a front end that lists the cases,
// such as the TUI's Live screen, reads them from these).
func (x *execution) kernels(ctx context.Context) (result.Document, error) {
	spec := x.job.Kernels.WithDefaults()
	rec := x.keep()
	sections := 0
	rep, err := kernelbench.Run(ctx, spec, func(e kernelbench.Event) {
		if e.Section != nil {
			if rec != nil {
				rec.KernelSection(sections, *e.Section)
			}
			sections++
			x.rep.Output(*e.Section)
		}
		x.rep.Output(kernelbench.Event{Done: e.Done, Total: e.Total, Unit: e.Unit, Case: e.Case})
		x.rep.Progress(float64(e.Done), float64(e.Total), cmp.Or(e.Unit, "cases"), e.Case)
	})
	if rep == nil {
		if err == nil {
			err = errors.New("kernels: no result")
		}
		return result.Document{}, err
	}
	if failed := rep.Failed(); err == nil && len(failed) > 0 {
		var names []string
		for _, c := range failed {
			names = append(names, c.Name)
		}
		err = fmt.Errorf("kernels: %w: %s", ErrCheckFailed, strings.Join(names, "; "))
	}
	return result.Document{Kernels: rep, Partial: rep.Partial}, err
}
