package jobs

import (
	"context"
	"errors"

	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
)

// checkBatch says in one line why a batch job cannot run: its spec, its model, and
// the sweeps and power limits it does not take.
func checkBatch(job workloads.Job) error {
	if len(job.PowerLimitW) > 0 || job.Sweep != nil {
		return errors.New("--power-limit and sweeps are for bench and serve-bench runs, not batch")
	}
	spec := job.Batch.WithDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	if spec.Approximate() {
		return nil
	}
	return CheckModel(spec.Model)
}

// batch runs TGI's benchmark (`llmbench batch`): each point's runs kept in the
// store as they finish; interrupted, it returns what was measured (partial) with
// context.Canceled.
func (x *execution) batch(ctx context.Context) (result.Document, error) {
	spec := x.job.Batch.WithDefaults()
	rec := x.keep()
	w := &micro.BatchBench{Spec: spec, Open: x.openModel, ModelID: ModelID(spec.Model)}
	if rec != nil {
		w.Observe = func(point int, r *micro.BatchResult) { rec.BatchPoint(point, *r, r.Points[point]) }
	}
	out, err := w.Run(ctx, x.rep)
	res, _ := out.(*micro.BatchResult)
	if res == nil {
		if err == nil {
			err = errors.New("batch: no result")
		}
		return result.Document{}, err
	}
	if ctx.Err() != nil {
		res.Partial, err = true, context.Canceled
	}
	return result.Document{Batch: res, Partial: res.Partial}, err
}
