package micro

import (
	"context"
	"testing"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/run"
	"llmbench/workloads/telemetry"
)

// TestBenchTelemetry: with a sampler on the run clock every record carries the power
// summary of its timed repetitions; without one, none does.
func TestBenchTelemetry(t *testing.T) {
	spec := workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin"}}, Prompt: []int{16}, Gen: []int{8}, Reps: 2}
	fake := func() run.Sampler {
		f, _ := telemetry.NewFake(telemetry.FakeOptions{})
		return telemetry.NewSampler(f, "fake")
	}
	cases := []struct {
		name    string
		sampler run.Sampler
		device  string // Bench.EnergyDevice
		known   bool
	}{
		// The CPU engine's energy is the CPU's: a GPU beside it never counts.
		{"fake GPU beside the CPU engine", fake(), "", false},
		{"fake GPU named as the energy device", fake(), "gpu:0", true},
		{"CPU only", telemetry.NewSampler(nil, "no GPU"), "", false}, // no RAPL on the test machines, or energy too small to tell
		{"no sampler", nil, "", false},
	}
	for _, c := range cases {
		b := &Bench{Spec: spec, Open: builtinOpen, PowerLimitW: 450, EnergyDevice: c.device}
		var opts []run.Option
		if c.sampler != nil {
			opts = append(opts, run.WithSampler(c.sampler, 10*time.Millisecond))
		}
		_, ev := run.Start(context.Background(), b, opts...)
		var done run.Done
		for e := range ev {
			if d, ok := e.(run.Done); ok {
				done = d
			}
		}
		res := done.Result.(*Result)
		if done.Err != nil || len(res.Records) != 2 {
			t.Fatalf("%s: %+v", c.name, done)
		}
		for _, r := range res.Records {
			if r.PowerLimitW != 450 || (r.Telemetry != nil) != (c.sampler != nil) {
				t.Errorf("%s %s: limit %v telemetry %+v", c.name, r.Name(), r.PowerLimitW, r.Telemetry)
			}
			if c.known {
				tp := r.Telemetry
				if !r.EnergyKnown() || tp.Source != telemetry.SourceFake || tp.Device != "gpu:0" || tp.Samples < 2 || r.TokensPerJoule() <= 0 || tp.MinW > tp.MaxW {
					t.Errorf("%s %s: %+v", c.name, r.Name(), tp)
				}
				if (r.NGen > 0) != (r.JoulesPerOutputToken() > 0) {
					t.Errorf("%s %s: J/output token %v", c.name, r.Name(), r.JoulesPerOutputToken())
				}
				continue
			}
			if c.sampler == nil && (r.EnergyKnown() || r.TokensPerJoule() != 0 || r.JoulesPerOutputToken() != 0) {
				t.Errorf("%s %s: energy without a sampler", c.name, r.Name())
			}
			if tp := r.Telemetry; tp != nil && (tp.Device != telemetry.EnergyCPU || tp.Source == telemetry.SourceFake || tp.SMClockMHz != 0) {
				t.Errorf("%s %s: the CPU engine's energy from elsewhere: %+v", c.name, r.Name(), tp)
			}
		}
	}
}
