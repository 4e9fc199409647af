package jobs

import (
	"context"
	"fmt"
	"time"

	"llmbench/engine"
	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/report"
)

// ProgressBytes is the unit of the run progress published while a synthetic model is
// written: Done bytes of the file written, of Total, its size.
const ProgressBytes = "bytes"

// openModel is OpenModel for a run. A synthetic model that is not cached yet is
// announced in the log with its size and the free disk, and its writing shows as
// run progress in ProgressBytes with the time left; the log names the file once it
// is complete.
func (x *execution) openModel(ctx context.Context, m workloads.BenchModel, opts engine.Options) (*engine.Engine, string, error) {
	var progress func(done, total int64)
	id := ModelID(m)
	if m.Shape != "" {
		if p, err := (synth.Cache{Dir: x.o.CacheDir}).Plan(m.Shape, m.Type, synth.DefaultSeed); err == nil && !p.Cached {
			x.logf("synthetic model %s", p)
			progress = x.writing(id)
		}
	}
	e, file, err := OpenModel(ctx, m, opts, x.o.CacheDir, progress)
	if err == nil && m.Shape != "" {
		x.logf("synthetic model %s: %s", id, file)
	}
	return e, file, err
}

// writing returns the progress callback of writing synthetic model id.
func (x *execution) writing(id string) func(done, total int64) {
	start := x.rep.Now()
	return func(done, total int64) {
		x.rep.Progress(float64(done), float64(total), ProgressBytes, writingLabel(id, done, total, x.rep.Now()-start))
	}
}

// minETA is how long a write runs before its rate is trusted for the time left.
const minETA = time.Second

// writingLabel says how far the writing of synthetic model id is after elapsed:
// "writing synth:llama-1b:Q4_0 · 312.00 MiB of 738.91 MiB · ETA 9 s".
func writingLabel(id string, done, total int64, elapsed time.Duration) string {
	s := fmt.Sprintf("writing %s · %s of %s", id, report.BytesIEC(uint64(max(done, 0))), report.BytesIEC(uint64(max(total, 0))))
	if left, ok := eta(done, total, elapsed); ok {
		s += fmt.Sprintf(" · ETA %.0f s", left.Seconds())
	}
	return s
}

// eta is the time left to reach total at the rate so far; false until minETA has
// passed with something done, or once total is reached.
func eta(done, total int64, elapsed time.Duration) (time.Duration, bool) {
	if done <= 0 || done >= total || elapsed < minETA {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(total-done) / float64(done)), true
}
