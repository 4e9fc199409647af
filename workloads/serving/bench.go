package serving

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/power"
	"llmbench/workloads/run"
	"llmbench/workloads/telemetry"
)

// Bench is one point of a serving benchmark as a run.Workload: warm-ups, then every
// dataset request released on the arrival schedule, at most MaxConcurrency in flight.
type Bench struct {
	Spec    workloads.ServeSpec
	Dataset *Dataset
	Client  Client
	// ModelID and TokenizerID name what was benchmarked, for the result.
	ModelID, TokenizerID string
	// Notes are lines about the run worth keeping with its result.
	Notes []string
	// Spin is the Pacer's busy-wait window (DefaultSpin when zero).
	Spin time.Duration
	// PowerLimitW is recorded in the result (the GPU limit of this point, 0 when
	// unchanged).
	PowerLimitW float64
	// Engine, when set, reads the in-process engine's counters; the result keeps their
	// change over the measured part.
	Engine func() EngineStats
	// Warm opens keep-alive connections before the clock starts when
	// Spec.WarmConnections is set (nil: the Client, when it is a ConnWarmer).
	Warm ConnWarmer
}

// ConnWarmer is a client that can open keep-alive connections ahead of a run
// (*HTTP is one): it returns how many it holds open.
type ConnWarmer interface {
	WarmConnections(ctx context.Context, n int) (int, error)
}

// Result is everything a serving run measured: the raw records (the source of every
// reported figure), their summary and how the run went.
type Result struct {
	Spec                 workloads.ServeSpec
	ModelID, TokenizerID string
	Started              time.Time // wall clock at the start of the measured part
	Duration             time.Duration
	Records              []metrics.Record // one per sent request, interrupted ones left out
	Summary              metrics.Serving
	Partial              bool // stopped early (Ctrl-C); Records hold what finished
	// Requests is how many requests the point was to send (the dataset's, after its
	// filters): Summary.Completed + Summary.Failed + Interrupted always add up to it.
	Requests    int
	Interrupted int // requests in flight or not yet sent when the run stopped (Ctrl-C, esc only)
	// WarmConnections is how many keep-alive connections were open before the clock
	// started (Spec.WarmConnections), 0 when none were opened ahead.
	WarmConnections int
	Skipped         int // dataset prompts dropped by filters or the context limit
	Notes           []string
	RateChanges     []RateChange // ramp-up: when each integer rate was reached
	// PowerLimitW is the GPU power limit the point ran at (0: left as it was).
	PowerLimitW float64
	// Telemetry summarises power and energy over the measured part (nil when no
	// telemetry was sampled).
	Telemetry *telemetry.Power
	// Engine holds the in-process engine's KV cache and counters over the measured part
	// (nil for HTTP backends).
	Engine *EngineStats
}

// EnergyKnown reports whether the run's energy was measured.
func (r *Result) EnergyKnown() bool { return r.Telemetry != nil && r.Telemetry.Known() }

// OutputTokensPerJoule returns generated tokens per joule (0 when unknown).
func (r *Result) OutputTokensPerJoule() float64 {
	if !r.EnergyKnown() {
		return 0
	}
	return float64(r.Summary.TotalOutput) / r.Telemetry.EnergyJ
}

// JoulesPerOutputToken returns the energy per generated token (0 when unknown).
func (r *Result) JoulesPerOutputToken() float64 {
	if !r.EnergyKnown() || r.Summary.TotalOutput == 0 {
		return 0
	}
	return r.Telemetry.EnergyJ / float64(r.Summary.TotalOutput)
}

// RateChange is a ramp-up event: the integer request rate reached at a time.
type RateChange struct {
	RPS       int    `json:"rps"`
	Timestamp string `json:"timestamp"`
}

// Name implements run.Workload.
func (b *Bench) Name() string { return "serve-bench" }

// EnergyDevice is the device whose energy the result counts: the CPU packages (RAPL)
// for the in-process engine, which computes on the CPU; for an external server the
// spec's EnergyDevice, which the user names (a GPU's joules are never divided into a
// server's tokens unless the user says that GPU served them), else "" (none named:
// no energy, and the result says how to name one).
func (b *Bench) EnergyDevice() string {
	if b.Spec.EnergyDevice != "" {
		return b.Spec.EnergyDevice
	}
	if b.Spec.Backend == "inproc" {
		return telemetry.EnergyCPU
	}
	return ""
}

// Arrival returns the schedule configuration of the spec.
func (b *Bench) Arrival() Arrival {
	s := b.Spec
	bu := s.Burstiness
	if bu == 0 {
		bu = 1
	}
	return Arrival{Rate: float64(s.RequestRate), Burstiness: bu, RampUp: s.RampUpStrategy,
		RampStart: s.RampUpStartRPS, RampEnd: s.RampUpEndRPS, Seed: s.Dataset.Seed}
}

// Run implements run.Workload. On cancellation it returns the partial *Result with
// ctx's error.
func (b *Bench) Run(ctx context.Context, r *run.Reporter) (any, error) {
	arr := b.Arrival()
	if err := arr.Validate(); err != nil {
		return nil, err
	}
	reqs := b.Dataset.Requests
	res := &Result{Spec: b.Spec, ModelID: b.ModelID, TokenizerID: b.TokenizerID, Skipped: b.Dataset.Skipped, Notes: b.Notes,
		PowerLimitW: b.PowerLimitW, Requests: len(reqs)}
	var sem chan struct{}
	if b.Spec.MaxConcurrency > 0 {
		sem = make(chan struct{}, b.Spec.MaxConcurrency)
	}
	if n := b.Spec.NumWarmups; n > 0 {
		r.Logf("Warming up with %d requests...", n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !acquire(ctx, sem) {
					return
				}
				defer release(sem)
				var rec metrics.Record
				rec.Index = -1 - i
				b.Client.Do(ctx, &reqs[0], &rec, r.Now)
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			res.Partial, res.Interrupted = true, len(reqs)
			return res, ctx.Err()
		}
		r.Logf("Warmup run completed.")
	}
	if b.Spec.WarmConnections {
		if err := b.warmConnections(ctx, r, res, len(reqs)); err != nil {
			return nil, err
		}
	}
	sched := arr.Schedule(len(reqs))
	recs := make([]metrics.Record, len(reqs))
	live := metrics.NewLive(len(reqs))
	var finished atomic.Int64
	stopTick := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopTick:
				return
			case <-t.C:
				r.Progress(float64(finished.Load()), float64(len(reqs)), "requests", "serve-bench")
				r.Snapshot(live.Snapshot())
			}
		}
	}()
	pacer := Pacer{Spin: b.Spin}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	first, sampled := r.SampleNow() // the energy span starts here
	var engBefore EngineStats
	if b.Engine != nil {
		engBefore = b.Engine()
	}
	res.Started = time.Now()
	base := r.Now()
	live.Begin(base)
	startWall := r.Start().Add(base)
	lastInt := -1
	if arr.RampUp != "" {
		lastInt = int(arr.RampStart)
		res.RateChanges = append(res.RateChanges, RateChange{lastInt, time.Now().Format("2006-01-02T15:04:05.000000")})
	}
	var wg sync.WaitGroup
	sent := 0
	for i := range reqs {
		if _, err := pacer.Wait(ctx, startWall, sched[i], timer); err != nil {
			break
		}
		rec := &recs[i]
		rec.Index, rec.PromptLen, rec.Expected = i, reqs[i].PromptLen, reqs[i].OutputLen
		rec.Scheduled, rec.Arrival = base+sched[i], r.Now()
		rec.Stream = live.Stream()
		if arr.RampUp != "" {
			if cur := int(arr.RateAt(i, len(reqs))); cur > lastInt {
				ts := time.Now().Format("2006-01-02T15:04:05.000000")
				for v := lastInt + 1; v <= cur; v++ {
					res.RateChanges = append(res.RateChanges, RateChange{v, ts})
				}
				lastInt = cur
			}
		}
		sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !acquire(ctx, sem) {
				rec.Fail(metrics.ReasonInterrupted, "interrupted: the run stopped before the request was sent")
				return
			}
			b.Client.Do(ctx, &reqs[rec.Index], rec, r.Now)
			release(sem)
			live.Add(rec)
			finished.Add(1)
		}()
	}
	wg.Wait()
	res.Duration = r.Now() - base
	if b.Engine != nil {
		st := b.Engine().Since(engBefore)
		res.Engine = &st
	}
	if sampled {
		last, _ := r.SampleNow()
		res.Telemetry = power.Summary(r.Telemetry(first.At, last.At), b.EnergyDevice())
	}
	close(stopTick)
	<-tickDone
	r.Progress(float64(finished.Load()), float64(len(reqs)), "requests", "serve-bench")
	kept := recs[:0]
	for _, rec := range recs[:sent] {
		if rec.Interrupted() {
			res.Interrupted++
			continue
		}
		kept = append(kept, rec)
	}
	res.Interrupted += len(reqs) - sent
	res.Records = kept
	res.Partial = ctx.Err() != nil
	res.Summary = Summarize(res)
	if lag, ok := res.Summary.SendLag.Percentile(99); ok && lag > 1 {
		r.Logf("warning: client send lag p99 %.2f ms exceeds 1 ms: the load generator fell behind its schedule "+
			"(usually other processes, or the server on the same cores, keeping it off the CPU)", lag)
	}
	if res.Partial {
		return res, ctx.Err()
	}
	return res, nil
}

// warmConnections opens up to --max-concurrency keep-alive connections (every request
// of the point when unbounded, at most 4096) just before the clock starts, so that the
// first wave's TTFT holds no connection set-up; the result says how many were open.
func (b *Bench) warmConnections(ctx context.Context, r *run.Reporter, res *Result, n int) error {
	w := b.Warm
	if w == nil {
		w, _ = b.Client.(ConnWarmer)
	}
	if w == nil {
		return nil // in-process: there is no connection to open
	}
	if b.Spec.MaxConcurrency > 0 {
		n = min(n, b.Spec.MaxConcurrency)
	}
	n = min(n, 4096)
	got, err := w.WarmConnections(ctx, n)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		r.Logf("warning: %v; the run goes on without warm connections", err)
	}
	res.WarmConnections = got
	r.Logf("Opened %d of %d keep-alive connections before the clock.", got, n)
	return nil
}

// Summarize computes the metrics of a result from its raw records.
func Summarize(res *Result) metrics.Serving {
	pcts := res.Spec.MetricPercentiles
	if len(pcts) == 0 {
		pcts = []float64{99}
	}
	return metrics.Summary(res.Records, res.Duration, metrics.ServingConfig{Percentiles: pcts, Goodput: res.Spec.Goodput, NonStreaming: res.Spec.NonStreaming})
}

func acquire(ctx context.Context, sem chan struct{}) bool {
	if sem == nil {
		return ctx.Err() == nil
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func release(sem chan struct{}) {
	if sem != nil {
		<-sem
	}
}

// CheckEnergyDevice checks and canonicalises s.EnergyDevice (see
// telemetry.ParseEnergyDevice). The inproc backend computes on the CPU, so it takes
// "cpu" or "none" only: a GPU's joules never count for the CPU engine's tokens.
func CheckEnergyDevice(s *workloads.ServeSpec) error {
	dev, err := telemetry.ParseEnergyDevice(s.EnergyDevice)
	if err != nil {
		return err
	}
	if s.Backend == "inproc" && dev != "" && dev != telemetry.EnergyCPU && dev != telemetry.EnergyNone {
		return fmt.Errorf("energy device %s: the inproc backend's engine runs on the CPU (cpu or none)", dev)
	}
	s.EnergyDevice = dev
	return nil
}
