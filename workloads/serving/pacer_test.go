package serving

import (
	"context"
	"testing"
	"time"

	"llmbench/workloads/metrics"
)

// TestPacerWait: releases are never early, come close to the target, and cancellation
// ends a wait at once. The runtime's timers alone wake up to a millisecond late, so the
// median catches a pacer that relies on them: under LLMBENCH_STRICT=1 it must be
// ≤ 0.1 ms and the p99 ≤ 15 ms; make test checks only that no release is early (how
// late a release is depends on what else runs on the machine).
func TestPacerWait(t *testing.T) {
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	var p Pacer
	start := time.Now()
	var lags []float64
	at := time.Duration(0)
	for i := range 200 {
		at += time.Duration(100+(i*37)%2900) * time.Microsecond // gaps of 0.1 to 3 ms
		got, err := p.Wait(context.Background(), start, at, tm)
		if err != nil {
			t.Fatal(err)
		}
		lag := got.Sub(start) - at
		if lag < 0 {
			t.Fatalf("release %d was %v early", i, -lag)
		}
		lags = append(lags, float64(lag)/1e6)
	}
	p50, p99 := metrics.Percentile(lags, 50), metrics.Percentile(lags, 99)
	t.Logf("pacer lag over 200 sends: p50 %.3f ms, p99 %.3f ms", p50, p99)
	if strict() && p99 > 15 {
		t.Errorf("pacer lag p99 %.3f ms > 15 ms", p99)
	}
	if strict() && !raceEnabled && p50 > 0.1 {
		t.Errorf("pacer lag p50 %.3f ms > 0.1 ms: sleeping on the runtime's timers?", p50)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	t0 := time.Now()
	if _, err := p.Wait(ctx, time.Now(), time.Hour, tm); err == nil || time.Since(t0) > 2*time.Second {
		t.Errorf("cancelled wait: err %v after %v", err, time.Since(t0))
	}
}
