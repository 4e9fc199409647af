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
	cases := []struct {
		name    string
		sampler run.Sampler
		known   bool
	}{
		{"fake GPU", func() run.Sampler {
			f, _ := telemetry.NewFake(telemetry.FakeOptions{})
			return telemetry.NewSampler(f, "fake")
		}(), true},
		{"CPU only", telemetry.NewSampler(nil, "no GPU"), false}, // no RAPL on the test machines, or energy too small to tell
		{"no sampler", nil, false},
	}
	for _, c := range cases {
		b := &Bench{Spec: spec, Open: builtinOpen, PowerLimitW: 450}
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
				if !r.EnergyKnown() || tp.Source != "gpu" || tp.Samples < 2 || r.TokensPerJoule() <= 0 || tp.MinW > tp.MaxW {
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
		}
	}
}
