package jobs

import (
	"context"
	"errors"
	"slices"
	"strings"

	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
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

// batch runs TGI's benchmark (`llmbench batch`), on the in-process engine or
// against a server: each point's runs kept in the store as they finish; interrupted,
// it returns what was measured (partial) with context.Canceled.
func (x *execution) batch(ctx context.Context) (result.Document, error) {
	spec := x.job.Batch.WithDefaults()
	var observe func(int, *micro.BatchResult)
	if rec := x.keep(); rec != nil {
		observe = func(point int, r *micro.BatchResult) { rec.BatchPoint(point, *r, r.Points[point]) }
	}
	var w run.Workload = &micro.BatchBench{Spec: spec, Open: x.openModel, ModelID: ModelID(spec.Model), Observe: observe}
	if spec.Approximate() {
		sw, err := x.batchServer(ctx, spec)
		if err != nil {
			return result.Document{}, err
		}
		sw.Observe, w = observe, sw
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

// batchServer prepares TGI's benchmark against a server: the serving client of its
// backend (batch-size simultaneous requests per run), the figures labelled as an
// approximation everywhere.
func (x *execution) batchServer(ctx context.Context, spec workloads.BatchSpec) (*micro.BatchServer, error) {
	p := spec.Sampling()
	temp := float64(p.Temperature)
	sp := workloads.ServeSpec{Backend: spec.Backend, BaseURL: strings.TrimSuffix(spec.BaseURL, "/"), Model: spec.ServerModel, Tokenizer: spec.Tokenizer,
		IgnoreEOS: true, Temperature: &temp, Dataset: workloads.DatasetSpec{NumPrompts: slices.Max(spec.BatchSize)}}
	if p.TopP > 0 {
		v := float64(p.TopP)
		sp.TopP = &v
	}
	if p.TopK > 0 {
		sp.TopK = &p.TopK
	}
	x.rep.Progress(0, 0, "tests", "connecting to "+sp.BaseURL)
	be, err := x.backend(ctx, &sp)
	if err != nil {
		return nil, err
	}
	return &micro.BatchServer{Spec: spec, Client: be.client, Tok: be.tok, ModelID: be.modelID, Backend: spec.Backend + " " + sp.BaseURL}, nil
}
