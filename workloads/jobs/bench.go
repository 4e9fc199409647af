package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/telemetry"
)

// bench runs a llama-bench style job at each power limit (once when none), keeping
// every repetition in the store as it finishes. Interrupted, it returns what was
// measured (partial) with context.Canceled.
func (x *execution) bench(ctx context.Context) (result.Document, error) {
	spec := *x.job.Bench
	dev := x.o.Device
	w := &micro.Bench{
		Spec:      spec,
		Open:      x.openModel,
		Build:     x.o.Build,
		CPUInfo:   telemetry.CPUInfo().Model,
		GPUInfo:   dev.GPUName(),
		Placement: micro.Placement{Prio: spec.Prio, NUMA: spec.NUMA},
		Steps:     x.o.Bench.Steps,
		Verbose:   x.o.Bench.Verbose,
	}
	if b := x.o.Bench; b.CeilingBytes > 0 {
		threads := 0
		if len(spec.Threads) > 0 {
			threads = spec.Threads[len(spec.Threads)-1]
		}
		w.ReadBandwidth = func(ctx context.Context) (float64, error) {
			bw, err := telemetry.MeasureReadBandwidth(ctx, b.CeilingBytes, threads, max(1, b.CeilingProbes))
			return bw.Median, err
		}
	}
	rec := x.keep()
	all := &micro.Result{Spec: spec.WithDefaults(), TelemetryNote: dev.Note}
	err := dev.sweep(ctx, x.job.PowerLimitW, x.o.Settle, x.logf, func(ctx context.Context, watts float64) error {
		w.PowerLimitW = watts
		if rec != nil {
			base := len(all.Records)
			w.Observe = func(test int, r micro.Record) { rec.BenchRecord(base+test, r) }
		}
		out, err := w.Run(ctx, x.rep)
		res, _ := out.(*micro.Result)
		if res == nil {
			if err == nil {
				err = errors.New("bench: no result")
			}
			return err
		}
		all.Records = append(all.Records, res.Records...)
		all.ReadBandwidth = max(all.ReadBandwidth, res.ReadBandwidth)
		if ctx.Err() != nil || res.Partial {
			all.Partial = true
			return context.Canceled
		}
		return err
	})
	if all.Partial {
		err = context.Canceled
	}
	return result.Document{Bench: all, Partial: all.Partial}, err
}

// ListDevices writes llama-bench's --list-devices for the engine: the devices it
// computes on (the CPU; GPUs are only sampled for telemetry, see llmbench sysinfo).
func ListDevices(w io.Writer) error {
	c := telemetry.CPUInfo()
	_, err := fmt.Fprintf(w, "Available devices:\n  CPU: %s (%d logical CPUs)\n", c.Model, runtime.NumCPU())
	return err
}
