package micro

import (
	"context"
	"errors"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/run"
)

// stepClock is a clock that moves on by step at every reading.
type stepClock struct {
	t    time.Time
	step time.Duration
	n    int
}

func (c *stepClock) now() time.Time { c.n++; c.t = c.t.Add(c.step); return c.t }

func runBatch(t *testing.T, ctx context.Context, b *BatchBench) (*BatchResult, run.Done, []BatchSnapshot) {
	t.Helper()
	return runBatchWorkload(t, ctx, b)
}

func runBatchWorkload(t *testing.T, ctx context.Context, b run.Workload) (*BatchResult, run.Done, []BatchSnapshot) {
	t.Helper()
	_, ev := run.Start(ctx, b)
	var done run.Done
	var snaps []BatchSnapshot
	for e := range ev {
		switch x := e.(type) {
		case run.Done:
			done = x
		case run.Snapshot:
			if s, ok := x.Data.(BatchSnapshot); ok {
				snaps = append(snaps, s)
			}
		}
	}
	res, _ := done.Result.(*BatchResult)
	if res == nil {
		t.Fatalf("no result: %+v", done)
	}
	return res, done, snaps
}

// TestBatchBenchTimes runs two batch sizes on the built-in model under a clock that
// moves 1 ms per reading: a run reads it before and after the prefill and around
// each of its decode-length − 1 steps, so every prefill and step is 1 ms and the
// whole decode 2·3 + 1 = 7 ms; warmups are not kept, every run is observed.
func TestBatchBenchTimes(t *testing.T) {
	w := 2
	clk := &stepClock{t: time.Unix(0, 0), step: time.Millisecond}
	observed := 0
	b := &BatchBench{Spec: workloads.BatchSpec{Model: workloads.BenchModel{Path: workloads.BuiltinModel}, SequenceLength: 12, DecodeLength: 4,
		BatchSize: []int{1, 3}, Runs: 2, Warmups: &w, Threads: 1, Label: "TP - 1"},
		Open: builtinOpen, ModelID: "stories260K", Now: clk.now,
		Observe: func(point int, r *BatchResult) { observed++; _ = r.Points[point] }}
	res, done, snaps := runBatch(t, context.Background(), b)
	if done.Err != nil || done.Partial || res.Partial {
		t.Fatalf("done: %+v", done)
	}
	if res.Model != "stories260K" || res.Label != "TP - 1" || res.Threads != 1 || res.Backend == "" || res.ModelType == "" {
		t.Errorf("header: %+v", res)
	}
	if len(res.Points) != 2 || res.Points[0].BatchSize != 1 || res.Points[1].BatchSize != 3 {
		t.Fatalf("points: %+v", res.Points)
	}
	for _, p := range res.Points {
		if len(p.Runs) != 2 || p.KVCacheBytes <= 0 {
			t.Fatalf("batch %d: %d runs, KV %d bytes", p.BatchSize, len(p.Runs), p.KVCacheBytes)
		}
		for _, r := range p.Runs {
			if r.PrefillNs != 1e6 || r.DecodeNs != 7e6 || len(r.DecodeStepsNs) != 3 {
				t.Errorf("batch %d run: %+v, want prefill 1 ms, 3 steps, decode 7 ms", p.BatchSize, r)
			}
			for _, s := range r.DecodeStepsNs {
				if s != 1e6 {
					t.Errorf("step %d ns, want 1 ms", s)
				}
			}
		}
		if got := StatsOf(p.DecodeTPS()).Avg; got != float64(p.BatchSize*3)/0.007 {
			t.Errorf("batch %d decode throughput %g", p.BatchSize, got)
		}
	}
	// (2 warmups + 2 runs) × 2 batch sizes × (2 + 2·3 + 1) readings.
	if clk.n != 4*2*9 {
		t.Errorf("%d clock readings, want %d", clk.n, 4*2*9)
	}
	if r := (BatchSnapshot{BatchSize: 3, Run: 2, Runs: 2, Latest: res.Points[1].Runs[1]}).Rep(); r.Test != "decode bs3" || r.Tokens != 9 || r.TokensPerSec() != 9/0.007 {
		t.Errorf("as a repetition: %+v", r)
	}
	// Snapshots travel latest-wins: at least the last arrives.
	if observed != 4 || len(snaps) == 0 || snaps[len(snaps)-1].BatchSize != 3 || snaps[len(snaps)-1].Run != 2 {
		t.Errorf("%d observed runs (want 4), snapshots %+v", observed, snaps)
	}
}

// TestBatchBenchCancel stops a run after its first timed run: the result keeps that
// run and says it is partial.
func TestBatchBenchCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := 0
	b := &BatchBench{Spec: workloads.BatchSpec{Model: workloads.BenchModel{Path: workloads.BuiltinModel}, SequenceLength: 8, DecodeLength: 3,
		BatchSize: []int{2, 4}, Runs: 3, Warmups: &w, Threads: 1}, Open: builtinOpen, ModelID: "stories260K",
		Observe: func(int, *BatchResult) { cancel() }}
	res, done, _ := runBatch(t, ctx, b)
	if !done.Partial && !errors.Is(done.Err, context.Canceled) || !res.Partial || len(res.Points) != 1 || len(res.Points[0].Runs) != 1 || !res.Points[0].Partial {
		t.Errorf("cancelled run: err %v, %+v", done.Err, res)
	}
}

// TestBatchBenchRefuses checks what fails before any run: a spec that does not
// validate, and a sequence that does not fit in the model's context.
func TestBatchBenchRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		spec workloads.BatchSpec
	}{
		{"decode length 1", workloads.BatchSpec{DecodeLength: 1}},
		{"past the context", workloads.BatchSpec{SequenceLength: 1 << 20}},
		{"bad kv type", workloads.BatchSpec{KVType: "q4_k"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.Model = workloads.BenchModel{Path: workloads.BuiltinModel}
			_, done, _ := runBatch(t, context.Background(), &BatchBench{Spec: c.spec, Open: builtinOpen})
			if done.Err == nil {
				t.Error("accepted")
			}
		})
	}
}
