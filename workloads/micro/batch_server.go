package micro

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
)

// BatchServer is TGI's benchmark measured from outside a server, which cannot be
// asked to prefill a batch in one step: a batch is BatchSize simultaneous requests
// of the same prompt, prefill ≈ the time from the first send to the last first
// token, and decode step k ≈ the time from the batch's (k−1)-th tokens having all
// arrived to its k-th tokens having all arrived (so the per-token latency is the
// mean gap). Its result is a *BatchResult marked Approximate.
type BatchServer struct {
	Spec   workloads.BatchSpec
	Client serving.Client
	// Tok counts the prompt's tokens (the server's tokenizer when known).
	Tok     serving.Tokenizer
	ModelID string
	Backend string // how the result names the server ("tgi http://host:8080")
	Observe func(point int, r *BatchResult)
}

// Name implements run.Workload.
func (b *BatchServer) Name() string { return "batch" }

// Run implements run.Workload.
func (b *BatchServer) Run(ctx context.Context, r *run.Reporter) (any, error) {
	spec := b.Spec.WithDefaults()
	res := &BatchResult{Spec: spec, Model: b.ModelID, Backend: b.Backend, Label: spec.SectionLabel(0), Approximate: true}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	r.Logf("%s", ApproximationNote)
	ids, err := loremTokens(b.Tok, spec.SequenceLength, false)
	if err != nil {
		return res, err
	}
	req := serving.Request{Prompt: b.Tok.Decode(ids), PromptLen: len(ids), OutputLen: spec.DecodeLength}
	err = runPoints(ctx, r, spec, res, func(bs int) (func(context.Context) (BatchRun, error), int64, error) {
		return func(ctx context.Context) (BatchRun, error) { return b.batch(ctx, &req, bs) }, 0, nil
	}, b.Observe)
	return res, err
}

// batch sends bs copies of req at once and reads the run off their records.
func (b *BatchServer) batch(ctx context.Context, req *serving.Request, bs int) (BatchRun, error) {
	recs := make([]metrics.Record, bs)
	t0 := time.Now()
	now := func() time.Duration { return time.Since(t0) }
	var wg sync.WaitGroup
	for i := range recs {
		wg.Go(func() {
			recs[i].Index, recs[i].PromptLen, recs[i].Expected = i, req.PromptLen, req.OutputLen
			b.Client.Do(ctx, req, &recs[i], now)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return BatchRun{}, err
	}
	return serverRun(recs)
}

// serverRun reads a batch's run off its requests' records: each request's chunk
// arrival times are its send time plus TTFT, then plus each inter-chunk gap.
func serverRun(recs []metrics.Record) (BatchRun, error) {
	steps := -1
	var first time.Duration = -1
	for i := range recs {
		rc := &recs[i]
		if !rc.Success {
			return BatchRun{}, fmt.Errorf("batch: request %d failed: %s", i, rc.Reason)
		}
		if first < 0 || rc.Start < first {
			first = rc.Start
		}
		if steps < 0 || len(rc.ITL) < steps {
			steps = len(rc.ITL)
		}
	}
	if len(recs) == 0 || steps < 1 {
		return BatchRun{}, errors.New("batch: the server streamed no token after the first (decode length 2 or more, and a streaming endpoint)")
	}
	// arrived[k]: when every request of the batch had its chunk k.
	arrived := make([]time.Duration, steps+1)
	for i := range recs {
		t := recs[i].Start + recs[i].TTFT
		arrived[0] = max(arrived[0], t)
		for k := 1; k <= steps; k++ {
			t += recs[i].ITL[k-1]
			arrived[k] = max(arrived[k], t)
		}
	}
	out := BatchRun{PrefillNs: max(1, (arrived[0] - first).Nanoseconds()), DecodeNs: max(1, (arrived[steps] - arrived[0]).Nanoseconds())}
	for k := 1; k <= steps; k++ {
		out.DecodeStepsNs = append(out.DecodeStepsNs, max(1, (arrived[k]-arrived[k-1]).Nanoseconds()))
	}
	return out, nil
}
