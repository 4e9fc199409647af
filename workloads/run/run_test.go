package run

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventsEndWithDone(t *testing.T) {
	w := Func{Label: "count", F: func(ctx context.Context, r *Reporter) (any, error) {
		for i := range 100 {
			r.Progress(float64(i+1), 100, "steps", "")
			r.Snapshot(i)
		}
		r.Logf("finished %d", 100)
		return 42, nil
	}}
	_, ch := Start(context.Background(), w)
	var last Event
	var sawLog bool
	var lastProg float64
	for e := range ch {
		switch e := e.(type) {
		case Log:
			sawLog = true
			if e.Text != "finished 100" {
				t.Errorf("log %q", e.Text)
			}
		case Progress:
			if e.Done < lastProg {
				t.Errorf("progress went back: %v after %v", e.Done, lastProg)
			}
			lastProg = e.Done
		}
		last = e
	}
	d, ok := last.(Done)
	if !ok || d.Result != 42 || d.Err != nil || d.Partial || !sawLog || lastProg != 100 {
		t.Fatalf("last event %#v, saw log %v, progress %v", last, sawLog, lastProg)
	}
}

// TestSlowConsumerNeverBlocksTheRun: the workload publishes far more than a consumer
// that reads nothing until the end could take; it must still finish promptly.
func TestSlowConsumerNeverBlocksTheRun(t *testing.T) {
	w := Func{Label: "flood", F: func(ctx context.Context, r *Reporter) (any, error) {
		for i := range 100000 {
			r.Progress(float64(i), 1e5, "", "")
			r.Snapshot(i)
			if i%100 == 0 {
				r.Logf("line %d", i)
			}
		}
		return "ok", nil
	}}
	run, ch := Start(context.Background(), w)
	select {
	case <-run.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run blocked on an unread event channel")
	}
	var d Done
	for e := range ch {
		if x, ok := e.(Done); ok {
			d = x
		}
	}
	if d.Result != "ok" || d.Dropped == 0 {
		t.Errorf("done %+v: want the result and some dropped log lines", d)
	}
}

func TestCancelGivesPartial(t *testing.T) {
	started := make(chan struct{})
	w := Func{Label: "wait", F: func(ctx context.Context, r *Reporter) (any, error) {
		close(started)
		<-ctx.Done()
		return "half", ctx.Err()
	}}
	run, ch := Start(context.Background(), w)
	<-started
	run.Cancel()
	var d Done
	for e := range ch {
		d, _ = e.(Done)
	}
	if !d.Partial || d.Err != nil || d.Result != "half" {
		t.Errorf("done %+v, want partial result without error", d)
	}
	if w := run.Wait(); w.Result != "half" {
		t.Errorf("Wait() = %+v", w)
	}
}

func TestFailureIsReported(t *testing.T) {
	boom := errors.New("boom")
	_, ch := Start(context.Background(), Func{Label: "fail", F: func(context.Context, *Reporter) (any, error) { return nil, boom }})
	var d Done
	for e := range ch {
		d, _ = e.(Done)
	}
	if !errors.Is(d.Err, boom) || d.Partial {
		t.Errorf("done %+v", d)
	}
}

// countSampler returns how many times it was called, and fails the test when two
// calls overlap.
type countSampler struct {
	n     int
	busy  bool
	t     *testing.T
	calls atomic.Int64 // n, readable from other goroutines
}

func (c *countSampler) Sample(at time.Duration) any {
	if c.busy {
		c.t.Error("Sample called concurrently")
	}
	c.busy = true
	c.n++
	n := c.n
	c.calls.Store(int64(n))
	c.busy = false
	return n
}

func TestSamplerOnTheRunClock(t *testing.T) {
	cases := []struct {
		name    string
		sampler bool
		every   time.Duration
	}{
		{"ticks and edges", true, 5 * time.Millisecond},
		{"default period", true, 0},
		{"no sampler", false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &countSampler{t: t}
			var opts []Option
			if c.sampler {
				opts = append(opts, WithSampler(s, c.every))
			}
			w := Func{Label: "sampled", F: func(ctx context.Context, r *Reporter) (any, error) {
				a, okA := r.SampleNow()
				time.Sleep(60 * time.Millisecond)
				// On a busy machine the ticker may not have run yet: wait (bounded) for
				// two ticks after the first edge, so the count below asserts what the
				// sampler does, not how the cores were shared.
				for end := time.Now().Add(10 * time.Second); c.every > 0 && s.calls.Load() < 3 && time.Now().Before(end); {
					time.Sleep(5 * time.Millisecond)
				}
				b, okB := r.SampleNow()
				if okA != c.sampler || okB != c.sampler {
					t.Errorf("SampleNow ok = %v, %v", okA, okB)
				}
				return r.Telemetry(a.At, b.At), nil
			}}
			_, ch := Start(context.Background(), w, opts...)
			var d Done
			var events int
			var last time.Duration
			for e := range ch {
				switch e := e.(type) {
				case Telemetry:
					events++
					if e.At < last {
						t.Errorf("telemetry went back on the run clock: %v after %v", e.At, last)
					}
					last = e.At
				case Done:
					d = e
				}
			}
			got := d.Result.([]Telemetry)
			if !c.sampler {
				if len(got) != 0 || events != 0 {
					t.Errorf("no sampler: %d readings, %d events", len(got), events)
				}
				return
			}
			// With a 5 ms period the span holds the edges and ticks between them.
			min := 2
			if c.every > 0 {
				min = 4
			}
			if len(got) < min || events == 0 {
				t.Fatalf("%d readings in the span (want ≥ %d), %d events", len(got), min, events)
			}
			for i := 1; i < len(got); i++ {
				if got[i].At < got[i-1].At || got[i].Data.(int) <= got[i-1].Data.(int) {
					t.Errorf("readings out of order: %+v", got)
				}
			}
		})
	}
}
