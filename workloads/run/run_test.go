package run

import (
	"context"
	"errors"
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
