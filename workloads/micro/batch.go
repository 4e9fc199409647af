package micro

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"llmbench/engine"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/run"
)

// BatchRun is one timed run of TGI's benchmark at one batch size: the prefill of the
// whole batch, each decode step, and the whole decode (from before the first step to
// after the last, as TGI times it).
type BatchRun struct {
	PrefillNs     int64   `json:"prefill_ns"`
	DecodeNs      int64   `json:"decode_ns"`
	DecodeStepsNs []int64 `json:"decode_steps_ns"`
}

// TokenMs returns the run's per-token decode latency in ms, as TGI: the whole decode
// over its steps.
func (r BatchRun) TokenMs() float64 {
	if len(r.DecodeStepsNs) == 0 {
		return 0
	}
	return float64(r.DecodeNs) / 1e6 / float64(len(r.DecodeStepsNs))
}

// BatchPoint is one batch size's timed runs (warmups excluded).
type BatchPoint struct {
	BatchSize int        `json:"batch_size"`
	Runs      []BatchRun `json:"runs"`
	// KVCacheBytes is the memory of the batch's KV cache (0 on a server).
	KVCacheBytes int64 `json:"kv_cache_bytes,omitempty"`
	// Partial is set when the point was interrupted before all its runs.
	Partial bool `json:"partial,omitempty"`
}

// PrefillMs returns each run's prefill latency in ms.
func (p BatchPoint) PrefillMs() []float64 {
	return p.each(func(r BatchRun) float64 { return float64(r.PrefillNs) / 1e6 })
}

// DecodeTokenMs returns each run's per-token decode latency in ms (BatchRun.TokenMs).
func (p BatchPoint) DecodeTokenMs() []float64 { return p.each(BatchRun.TokenMs) }

// DecodeTotalMs returns each run's whole decode latency in ms.
func (p BatchPoint) DecodeTotalMs() []float64 {
	return p.each(func(r BatchRun) float64 { return float64(r.DecodeNs) / 1e6 })
}

// PrefillTPS returns each run's prefill throughput as TGI counts it: the batch's
// sequences (one sampled token each) over the prefill latency, tokens per second.
func (p BatchPoint) PrefillTPS() []float64 {
	return p.each(func(r BatchRun) float64 { return tps(p.BatchSize, r.PrefillNs) })
}

// DecodeTPS returns each run's decode throughput as TGI counts it: batch size times
// decode steps over the whole decode latency, tokens per second.
func (p BatchPoint) DecodeTPS() []float64 {
	return p.each(func(r BatchRun) float64 { return tps(p.BatchSize*len(r.DecodeStepsNs), r.DecodeNs) })
}

func tps(tokens int, ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	return float64(tokens) / (float64(ns) / 1e9)
}

func (p BatchPoint) each(f func(BatchRun) float64) []float64 {
	out := make([]float64, len(p.Runs))
	for i, r := range p.Runs {
		out[i] = f(r)
	}
	return out
}

// BatchStats are the figures of TGI's tables over one point's runs: average, lowest,
// highest, and percentiles with linear interpolation (workloads/metrics).
type BatchStats struct {
	Avg, Min, Max, P50, P90, P99 float64
}

// StatsOf summarises x (zero when empty).
func StatsOf(x []float64) BatchStats {
	if len(x) == 0 {
		return BatchStats{}
	}
	s := BatchStats{Avg: metrics.Mean(x), Min: x[0], Max: x[0],
		P50: metrics.Percentile(x, 50), P90: metrics.Percentile(x, 90), P99: metrics.Percentile(x, 99)}
	for _, v := range x {
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	return s
}

// BatchResult is a finished (or partial) run of TGI's benchmark.
type BatchResult struct {
	Spec workloads.BatchSpec `json:"spec"`
	// Model names the model as the job layer's id scheme does (synth:llama-1b:Q4_0,
	// a path, stories260K, or a server's model); ModelType describes it ("llama 1B
	// Q4_0", empty on a server).
	Model     string `json:"model"`
	ModelType string `json:"model_type,omitempty"`
	// Backend is the compute backend and its kernels (kernels.ImplName), or the
	// server's kind and URL; Threads the engine's threads (0 on a server).
	Backend string `json:"backend"`
	Threads int    `json:"threads,omitempty"`
	// Label heads the run's section (BatchSpec.SectionLabel).
	Label  string       `json:"label"`
	Points []BatchPoint `json:"points"`
	// Approximate is set for a server measured from outside: a batch is BatchSize
	// simultaneous requests, prefill ≈ the time to the last first token, a decode
	// step ≈ the mean gap between tokens.
	Approximate bool `json:"approximate,omitempty"`
	Partial     bool `json:"partial,omitempty"`
}

// ApproximationNote says how a server's figures are approximated.
const ApproximationNote = "APPROXIMATION: measured from outside a server; a batch is batch-size simultaneous requests, prefill ≈ the time to the last first token, a decode step ≈ the mean gap between tokens"

// BatchBench is TGI's benchmark on the in-process engine: run it with run.Start; its
// result is a *BatchResult.
type BatchBench struct {
	Spec workloads.BatchSpec
	Open OpenFunc
	// ModelID names the model in the result (the job layer's id scheme).
	ModelID string
	// Observe, when set, is called with the result so far after each timed run (point:
	// the index of the point that ran), so a results store keeps every run even if
	// the process dies. r is the workload's own: read it before returning.
	Observe func(point int, r *BatchResult)
	// Now reads the clock that times the steps (nil: time.Now); tests script it.
	Now func() time.Time
}

// Name implements run.Workload.
func (b *BatchBench) Name() string { return "batch" }

// BatchSnapshot is the Snapshot a run publishes after each timed run.
type BatchSnapshot struct {
	BatchSize, Run, Runs int
	Latest               BatchRun
}

// Rep returns the run as a repetition of a test named by its batch size ("decode
// bs8"), its tokens the batch's decoded tokens over the whole decode, so that a live
// view of llama-bench repetitions shows the decode throughput of each batch size.
func (s BatchSnapshot) Rep() RepSnapshot {
	return RepSnapshot{Test: fmt.Sprintf("decode bs%d", s.BatchSize), Rep: s.Run, Reps: s.Runs,
		Tokens: s.BatchSize * len(s.Latest.DecodeStepsNs), Elapsed: time.Duration(s.Latest.DecodeNs)}
}

// loremIpsum is the text TGI's benchmark repeats into its prompt.
const loremIpsum = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum."

// encoder is what loremTokens needs of a tokenizer (the engine's, or the one a
// serving job counts with).
type encoder interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
}

// loremTokens returns n tokens of lorem ipsum repeated, as TGI's benchmark builds its
// prompt (BOS first when special is set and the tokenizer adds one).
func loremTokens(tok encoder, n int, special bool) ([]int32, error) {
	text := loremIpsum
	ids := tok.Encode(text, special, special)
	for len(ids) < n {
		text += " " + loremIpsum
		more := tok.Encode(text, special, special)
		if len(more) <= len(ids) {
			return nil, fmt.Errorf("batch: the tokenizer makes no %d-token prompt of lorem ipsum", n)
		}
		ids = more
	}
	return ids[:n], nil
}

// pointRunner prepares one batch size: it returns the function that times one run
// of it and the memory of its KV cache (0 when unknown).
type pointRunner func(bs int) (run func(ctx context.Context) (BatchRun, error), kvBytes int64, err error)

// runPoints runs every batch size of spec, warmups then timed runs, into res:
// progress, a snapshot and observe after each timed run, a log line per point.
// Interrupted, it marks res and the point partial and returns ctx's error.
func runPoints(ctx context.Context, r *run.Reporter, spec workloads.BatchSpec, res *BatchResult, prepare pointRunner, observe func(int, *BatchResult)) error {
	warm := spec.NWarmups()
	total := float64(len(spec.BatchSize) * (warm + spec.Runs))
	done := 0.0
	for pi, bs := range spec.BatchSize {
		label := func(what string) string { return fmt.Sprintf("batch %d %s", bs, what) }
		timeRun, kv, err := prepare(bs)
		if err != nil {
			return err
		}
		res.Points = append(res.Points, BatchPoint{BatchSize: bs, KVCacheBytes: kv, Runs: []BatchRun{}})
		pt := &res.Points[pi]
		for i := range warm + spec.Runs {
			what := fmt.Sprintf("warmup %d/%d", i+1, warm)
			if i >= warm {
				what = fmt.Sprintf("run %d/%d", i-warm+1, spec.Runs)
			}
			r.Progress(done, total, "tests", label(what))
			run, err := timeRun(ctx)
			if err != nil {
				if ctx.Err() != nil {
					pt.Partial, res.Partial = true, true
					return ctx.Err()
				}
				return err
			}
			done++
			if i < warm {
				continue
			}
			pt.Runs = append(pt.Runs, run)
			if observe != nil {
				observe(pi, res)
			}
			r.Snapshot(BatchSnapshot{BatchSize: bs, Run: len(pt.Runs), Runs: spec.Runs, Latest: run})
		}
		r.Logf("batch %d: prefill %.2f ms, decode %.2f ms/token (%s)", bs, StatsOf(pt.PrefillMs()).Avg, StatsOf(pt.DecodeTokenMs()).Avg, res.Label)
	}
	r.Progress(total, total, "tests", "done")
	return nil
}

// Run implements run.Workload: for each batch size, the warmups and the timed runs.
// Interrupted, it returns the runs finished so far (Partial).
func (b *BatchBench) Run(ctx context.Context, r *run.Reporter) (any, error) {
	spec := b.Spec.WithDefaults()
	res := &BatchResult{Spec: spec, Model: b.ModelID, Label: spec.Label}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	if spec.Approximate() {
		return res, errors.New("batch: a server is measured by BatchServer, not the in-process benchmark")
	}
	kv, err := kernels.ParseDType(spec.KVType)
	if err != nil {
		return res, fmt.Errorf("--kv-cache-type: %q is not a type (f16, q8_0, f32)", spec.KVType)
	}
	now := b.Now
	if now == nil {
		now = time.Now
	}
	r.Progress(0, float64(len(spec.BatchSize)*(spec.NWarmups()+spec.Runs)), "tests", "loading "+b.ModelID)
	e, fname, err := b.Open(ctx, spec.Model, engine.Options{Threads: spec.Threads, KVType: kv, KVTypeSet: true})
	if err != nil {
		return res, err
	}
	defer e.Close()
	need := spec.SequenceLength + spec.DecodeLength
	if limit := e.Options().Context; need > limit {
		return res, fmt.Errorf("--sequence-length %d + --decode-length %d: needs %d positions, but %s holds %d", spec.SequenceLength, spec.DecodeLength, need, fname, limit)
	}
	facts := describe(e)
	res.ModelType, res.Threads = facts.typ, e.Backend().Threads()
	res.Backend = kernels.ImplName(e.Backend(), facts.matTypes)
	res.Label = spec.SectionLabel(res.Threads)
	prompt, err := loremTokens(e.Tok, spec.SequenceLength, true)
	if err != nil {
		return res, err
	}
	err = runPoints(ctx, r, spec, res, func(bs int) (func(context.Context) (BatchRun, error), int64, error) {
		debug.FreeOSMemory() // the previous batch's cache and activations are garbage now
		batch, err := e.NewBatch(bs, need, spec.Sampling())
		if err != nil {
			return nil, 0, err
		}
		prompts := make([][]int32, bs)
		for i := range prompts {
			prompts[i] = prompt
		}
		return func(ctx context.Context) (BatchRun, error) {
			return timeRun(ctx, batch, prompts, spec.DecodeLength, now)
		}, batch.KVBytes(), nil
	}, b.Observe)
	return res, err
}

// timeRun runs one prefill and decodeLen−1 decode steps on batch.
func timeRun(ctx context.Context, batch *engine.Batch, prompts [][]int32, decodeLen int, now func() time.Time) (BatchRun, error) {
	var out BatchRun
	if err := ctx.Err(); err != nil {
		return out, err
	}
	t0 := now()
	if _, err := batch.Prefill(prompts); err != nil {
		return out, err
	}
	t1 := now()
	out.PrefillNs = max(1, t1.Sub(t0).Nanoseconds())
	for range decodeLen - 1 {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		s := now()
		if _, err := batch.Decode(); err != nil {
			return out, err
		}
		out.DecodeStepsNs = append(out.DecodeStepsNs, max(1, now().Sub(s).Nanoseconds()))
	}
	out.DecodeNs = max(1, now().Sub(t1).Nanoseconds())
	return out, nil
}
