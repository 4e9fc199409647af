// Package run is the core every front end drives: it executes a Workload, stamps what
// happens on one monotonic run clock, and publishes live events on a bounded, lossy
// channel (the latest progress and snapshot win, so a slow terminal never slows a run),
// ending with a Done event, sent blocking, that carries the exact result.
package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Workload is a unit of work a run executes. Run returns the result, which must be a
// valid partial result when ctx is cancelled midway (with ctx's error).
type Workload interface {
	Name() string
	Run(ctx context.Context, r *Reporter) (any, error)
}

// Event is one thing a run publishes: Progress, Snapshot, Telemetry, Log, Output or Done.
type Event interface{ event() }

// Progress says how far the run is. Done and Total are in Unit ("tests", "requests").
type Progress struct {
	At          time.Duration // on the run clock
	Done, Total float64
	Unit        string
	Label       string // what runs now, e.g. "pp512 t=2 rep 3/5"
}

// Snapshot carries a workload-specific live view (live metrics, telemetry).
type Snapshot struct {
	At   time.Duration
	Data any
}

// Telemetry is one reading of the run's Sampler, stamped on the run clock.
type Telemetry struct {
	At   time.Duration
	Data any // what the Sampler returned
}

// Sampler takes telemetry readings (power, clocks, utilisation); the run calls it on
// its clock, one call at a time, so an implementation needs no locking of its own.
type Sampler interface {
	// Sample takes a reading now; at is the time on the run clock.
	Sample(at time.Duration) any
}

// Option configures Start.
type Option func(*options)

type options struct {
	sampler Sampler
	every   time.Duration
}

// WithSampler attaches a telemetry sampler read every period (100 ms when ≤ 0) while
// the workload runs: each reading is kept for Reporter.Telemetry and published as a
// Telemetry event (latest wins).
func WithSampler(s Sampler, every time.Duration) Option {
	return func(o *options) {
		if every <= 0 {
			every = 100 * time.Millisecond
		}
		o.sampler, o.every = s, every
	}
}

// maxReadings bounds the readings a run keeps (at 10 Hz, about 1.8 hours); when
// full, the older half is dropped.
const maxReadings = 1 << 16

// Log is one line for the run's log.
type Log struct {
	At   time.Duration
	Text string
}

// Output is a piece of a run's result published as it is made (see Reporter.Output).
type Output struct {
	At   time.Duration
	Data any
}

// Done ends every run: the exact result (from the workload, never from snapshots),
// the error if it failed, and whether it stopped early.
type Done struct {
	Elapsed time.Duration
	Result  any
	Err     error
	Partial bool // cancelled before finishing; Result holds what was measured
	Dropped int  // log lines dropped because the consumer fell behind
}

func (Progress) event()  {}
func (Snapshot) event()  {}
func (Log) event()       {}
func (Telemetry) event() {}
func (Done) event()      {}
func (Output) event()    {}

// maxPendingLogs bounds the log lines waiting for a slow consumer; older ones drop.
const maxPendingLogs = 256

// Reporter is how a workload publishes while it runs. Its methods never block.
type Reporter struct {
	start  time.Time
	mu     sync.Mutex
	prog   *Progress
	snap   *Snapshot
	queued []Event // Log and Output, in the order published
	nlogs  int     // Logs in queued
	drop   int
	tele   *Telemetry
	notify chan struct{}

	sampleMu sync.Mutex // serialises Sampler calls
	sampler  Sampler
	readings []Telemetry // guarded by mu
}

// Now returns the time on the run clock (monotonic, from the start of the run).
func (r *Reporter) Now() time.Duration { return time.Since(r.start) }

// Start returns the wall-clock instant the run clock counts from.
func (r *Reporter) Start() time.Time { return r.start }

// Progress publishes how far the run is; only the latest value is kept.
func (r *Reporter) Progress(done, total float64, unit, label string) {
	p := Progress{At: r.Now(), Done: done, Total: total, Unit: unit, Label: label}
	r.mu.Lock()
	r.prog = &p
	r.mu.Unlock()
	r.wake()
}

// Snapshot publishes a live view; only the latest value is kept.
func (r *Reporter) Snapshot(data any) {
	s := Snapshot{At: r.Now(), Data: data}
	r.mu.Lock()
	r.snap = &s
	r.mu.Unlock()
	r.wake()
}

// Logf publishes a log line.
func (r *Reporter) Logf(format string, args ...any) {
	l := Log{At: r.Now(), Text: fmt.Sprintf(format, args...)}
	r.mu.Lock()
	if r.nlogs >= maxPendingLogs {
		for i, e := range r.queued { // drop the oldest log line, never an Output
			if _, ok := e.(Log); ok {
				r.queued = append(r.queued[:i], r.queued[i+1:]...)
				break
			}
		}
		r.nlogs--
		r.drop++
	}
	r.queued = append(r.queued, l)
	r.nlogs++
	r.mu.Unlock()
	r.wake()
}

// Output publishes a piece of the result as it is made (a finished sweep point, a
// line a headless front end prints on stdout): never dropped, delivered in order
// with the log lines.
func (r *Reporter) Output(data any) {
	o := Output{At: r.Now(), Data: data}
	r.mu.Lock()
	r.queued = append(r.queued, o)
	r.mu.Unlock()
	r.wake()
}

// SampleNow takes a telemetry reading at once (outside the regular ticks), keeps and
// publishes it, and returns it; ok is false when the run has no sampler. Workloads
// call it at the edges of what they time, so energy covers exactly that span.
func (r *Reporter) SampleNow() (t Telemetry, ok bool) {
	if r.sampler == nil {
		return Telemetry{}, false
	}
	r.sampleMu.Lock()
	at := r.Now()
	t = Telemetry{At: at, Data: r.sampler.Sample(at)}
	r.mu.Lock()
	if len(r.readings) >= maxReadings {
		r.readings = append(r.readings[:0], r.readings[maxReadings/2:]...)
	}
	r.readings = append(r.readings, t)
	r.tele = &t
	r.mu.Unlock()
	r.sampleMu.Unlock()
	r.wake()
	return t, true
}

// Telemetry returns the readings stamped in [from, to] on the run clock, in order.
func (r *Reporter) Telemetry(from, to time.Duration) []Telemetry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Telemetry
	for _, t := range r.readings {
		if t.At >= from && t.At <= to {
			out = append(out, t)
		}
	}
	return out
}

func (r *Reporter) wake() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// take empties the pending events, logs first so they precede the progress they led to.
func (r *Reporter) take(out []Event) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out = append(out, r.queued...)
	r.queued, r.nlogs = r.queued[:0], 0
	if r.prog != nil {
		out = append(out, *r.prog)
		r.prog = nil
	}
	if r.snap != nil {
		out = append(out, *r.snap)
		r.snap = nil
	}
	if r.tele != nil {
		out = append(out, *r.tele)
		r.tele = nil
	}
	return out
}

// Run is a started run.
type Run struct {
	Name   string
	cancel context.CancelFunc
	done   chan struct{}
	final  Done
}

// Start runs w in the background. The returned channel must be read until it closes;
// its last event is the Done. With WithSampler, telemetry is read on the run clock
// from the start until the workload returns.
func Start(ctx context.Context, w Workload, opts ...Option) (*Run, <-chan Event) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithCancel(ctx)
	rep := &Reporter{start: time.Now(), notify: make(chan struct{}, 1), sampler: o.sampler}
	r := &Run{Name: w.Name(), cancel: cancel, done: make(chan struct{})}
	out := make(chan Event, 16)
	finished := make(chan Done, 1)
	stopSampling := func() {}
	if o.sampler != nil {
		stop, stopped := make(chan struct{}), make(chan struct{})
		rep.SampleNow()
		go func() {
			defer close(stopped)
			t := time.NewTicker(o.every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					rep.SampleNow()
				}
			}
		}()
		stopSampling = func() { close(stop); <-stopped }
	}
	go func() {
		res, err := w.Run(ctx, rep)
		stopSampling()
		d := Ended(ctx, rep, res, err)
		r.final = d
		close(r.done)
		finished <- d
	}()
	go func() {
		defer close(out)
		var batch []Event
		send := func() {
			batch = rep.take(batch[:0])
			for _, e := range batch {
				out <- e
			}
		}
		for {
			select {
			case <-rep.notify:
				send()
			case d := <-finished:
				send()
				rep.mu.Lock()
				d.Dropped = rep.drop
				rep.mu.Unlock()
				cancel()
				out <- d
				return
			}
		}
	}()
	return r, out
}

// Ended returns the Done of a workload that returned res and err on rep: a run whose
// context was cancelled (or timed out) is partial, not failed. Start uses it; so does
// a caller that runs a workload on a Reporter it already has (a TUI run's sweep point).
func Ended(ctx context.Context, rep *Reporter, res any, err error) Done {
	d := Done{Elapsed: rep.Now(), Result: res, Err: err}
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		d.Partial, d.Err = true, nil
	}
	return d
}

// Cancel asks the run to stop; it still ends with a Done carrying partial results.
func (r *Run) Cancel() { r.cancel() }

// Wait blocks until the workload has returned and gives its Done (Dropped is only
// final on the channel's Done). The channel must still be read until it closes.
func (r *Run) Wait() Done {
	<-r.done
	return r.final
}

// Func adapts a function to a Workload.
type Func struct {
	Label string
	F     func(ctx context.Context, r *Reporter) (any, error)
}

// Name implements Workload.
func (f Func) Name() string { return f.Label }

// Run implements Workload.
func (f Func) Run(ctx context.Context, r *Reporter) (any, error) { return f.F(ctx, r) }
