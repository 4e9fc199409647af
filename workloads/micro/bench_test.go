package micro

import (
	"context"
	"errors"
	"strings"
	"testing"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/kernels"
	"llmbench/kernels/cpu"
	"llmbench/workloads"
	"llmbench/workloads/run"
)

func builtinOpen(ctx context.Context, m workloads.BenchModel, opts engine.Options) (*engine.Engine, string, error) {
	e, err := engine.LoadBytes(ctx, builtin.Name, builtin.Stories260K, opts)
	return e, builtin.Name, err
}

func runBench(t *testing.T, ctx context.Context, spec workloads.BenchSpec) (*Result, run.Done) {
	t.Helper()
	return runWorkload(t, ctx, &Bench{Spec: spec, Open: builtinOpen, Build: "test", CPUInfo: "cpu"})
}

func runWorkload(t *testing.T, ctx context.Context, b *Bench) (*Result, run.Done) {
	t.Helper()
	_, ev := run.Start(ctx, b)
	var done run.Done
	for e := range ev {
		if d, ok := e.(run.Done); ok {
			done = d
		}
	}
	res, _ := done.Result.(*Result)
	if res == nil {
		t.Fatalf("no result: %+v", done)
	}
	return res, done
}

func TestBenchBuiltin(t *testing.T) {
	spec := workloads.BenchSpec{
		Models: []workloads.BenchModel{{Path: "builtin"}},
		Prompt: []int{16}, Gen: []int{8}, PG: []workloads.PG{{Prompt: 8, Gen: 4}}, Depth: []int{0, 32},
		UBatch: []int{4}, Threads: []int{1, 2}, Reps: 2,
	}
	res, done := runBench(t, context.Background(), spec)
	if done.Err != nil || done.Partial {
		t.Fatalf("done: %+v", done)
	}
	if len(res.Records) != 12 {
		t.Fatalf("%d records; want 2 threads × 2 depths × 3 tests = 12", len(res.Records))
	}
	names := map[string]int{}
	for _, r := range res.Records {
		names[r.Name()]++
		if len(r.SamplesNs) != 2 || r.AvgTs() <= 0 || r.KVCacheBytes <= 0 || r.PeakRSS <= 0 || r.FLOPsPerRep <= 0 {
			t.Errorf("%s: %+v", r.Name(), r)
		}
		if r.NBatch != 2048 || r.NUBatch != 4 || r.TypeK != "f16" || r.Backends != "CPU" || r.ModelType == "" {
			t.Errorf("%s: fields %+v", r.Name(), r)
		}
		if !implNamesKernel(r.BackendImpl) {
			t.Errorf("%s: backend_impl %q names no decode kernel of cpu.Kernels()", r.Name(), r.BackendImpl)
		}
		if r.NGen > 0 && r.NPrompt == 0 && r.MemBandwidth() <= 0 {
			t.Errorf("%s: no bandwidth", r.Name())
		}
	}
	for _, n := range []string{"pp16", "tg8", "pp8+tg4", "pp16 @ d32", "tg8 @ d32", "pp8+tg4 @ d32"} {
		if names[n] != 2 {
			t.Errorf("%s: %d records; want 2 (one per thread count)", n, names[n])
		}
	}
}

// implNamesKernel reports whether a record's backend_impl names the CPU backend and
// the decode kernel it runs for one of the weight types.
func implNamesKernel(impl string) bool {
	if !strings.HasPrefix(impl, "cpu/") {
		return false
	}
	for _, k := range cpu.Kernels() {
		if k.Phase == kernels.PhaseDecode && strings.Contains(impl, k.Type.String()+" decode "+k.Kernel+",") {
			return true
		}
	}
	return false
}

func TestBenchSadPaths(t *testing.T) {
	m := []workloads.BenchModel{{Path: "builtin"}}
	// The context of stories260K is far below a million positions.
	_, done := runBench(t, context.Background(), workloads.BenchSpec{Models: m, Prompt: []int{1 << 20}, Gen: []int{0}, Reps: 1})
	if done.Err == nil || !strings.Contains(done.Err.Error(), "positions") {
		t.Errorf("oversized test: %v", done.Err)
	}
	_, done = runBench(t, context.Background(), workloads.BenchSpec{Models: m, TypeK: []string{"bogus"}})
	if done.Err == nil || !strings.Contains(done.Err.Error(), "-ctk") {
		t.Errorf("bad KV type: %v", done.Err)
	}
	b := &Bench{Spec: workloads.BenchSpec{Models: m, Prompt: []int{4}, Gen: []int{0}, Reps: 1},
		Open: func(context.Context, workloads.BenchModel, engine.Options) (*engine.Engine, string, error) {
			return nil, "", errors.New("no such model")
		}}
	if _, done := runWorkload(t, context.Background(), b); done.Err == nil || !strings.Contains(done.Err.Error(), "no such model") {
		t.Errorf("open error: %v", done.Err)
	}
}

func TestBenchCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, done := runBench(t, ctx, workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin"}}, Prompt: []int{8}, Gen: []int{4}, Reps: 1})
	if !done.Partial || len(res.Records) != 0 {
		t.Errorf("cancelled run: partial %v, %d records", done.Partial, len(res.Records))
	}
}

// TestBenchKVTypes checks that -ctk reaches the engine: f32 keeps twice the bytes of
// f16 per position (f32 is the zero DType, once silently read as "default", i.e. f16).
func TestBenchKVTypes(t *testing.T) {
	bytes := map[string]int64{}
	for _, typ := range []string{"f16", "f32"} {
		spec := workloads.BenchSpec{
			Models: []workloads.BenchModel{{Path: "builtin"}},
			Prompt: []int{16}, Gen: []int{0}, TypeK: []string{typ}, Reps: 1,
		}
		res, done := runBench(t, context.Background(), spec)
		if done.Err != nil || len(res.Records) != 1 {
			t.Fatalf("%s: %+v", typ, done)
		}
		if r := res.Records[0]; r.TypeK != typ {
			t.Errorf("%s: record says type_k %q", typ, r.TypeK)
		}
		bytes[typ] = res.Records[0].KVCacheBytes
	}
	if bytes["f16"] <= 0 || bytes["f32"] != 2*bytes["f16"] {
		t.Errorf("KV cache bytes f16 %d, f32 %d; want f32 = 2 × f16", bytes["f16"], bytes["f32"])
	}
}

// TestBenchCeilingPerTest checks --ceiling's probes: one before the tests (the run's
// figure) and one just before each tg test, which that test's record carries; pp tests
// get none.
func TestBenchCeilingPerTest(t *testing.T) {
	var probes []float64
	b := &Bench{Spec: workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin"}}, Prompt: []int{4}, Gen: []int{2, 3}, Reps: 2},
		Open: builtinOpen, Build: "test", CPUInfo: "cpu",
		ReadBandwidth: func(context.Context) (float64, error) {
			probes = append(probes, float64(len(probes)+1)*1e9) // 1, 2, 3 … GB/s in turn
			return probes[len(probes)-1], nil
		}}
	res, done := runWorkload(t, context.Background(), b)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	// One before the tests; in each tg test one before each of the two repetitions and
	// one after the last.
	if len(probes) != 7 || res.ReadBandwidth != 1e9 {
		t.Fatalf("%d probes, run figure %g; want 7 (before the tests, 3 around each tg test's 2 repetitions), 1e9", len(probes), res.ReadBandwidth)
	}
	// tg2 reads 2, 3, 4 GB/s: repetitions against 2.5 and 3.5, so 3; tg3 5, 6, 7: 6.
	want := map[string]float64{"pp4": 0, "tg2": 3e9, "tg3": 6e9}
	for _, r := range res.Records {
		if r.ReadBandwidth != want[r.Name()] {
			t.Errorf("%s: read bandwidth %g (probes %v), want %g", r.Name(), r.ReadBandwidth, r.ReadBandwidthProbes, want[r.Name()])
		}
	}
	calls := 0
	b.ReadBandwidth = func(context.Context) (float64, error) {
		if calls++; calls == 4 { // tg2's last probe, after its repetitions
			return 0, errors.New("probe failed")
		}
		return 1e9, nil
	}
	if _, done := runWorkload(t, context.Background(), b); done.Err == nil || !strings.Contains(done.Err.Error(), "read bandwidth: probe failed") {
		t.Errorf("a failing probe in a tg test: %v", done.Err)
	}
}

// TestBracketMean checks the time-average of the probes around a test's repetitions.
func TestBracketMean(t *testing.T) {
	for _, c := range []struct {
		probes []float64
		want   float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{2, 4}, 3},
		{[]float64{1, 2, 4}, 2.25}, // (1.5 + 3) / 2
		{[]float64{4, 0, 0, 4}, 4.0 / 3},
	} {
		if got := BracketMean(c.probes); got != c.want {
			t.Errorf("BracketMean(%v) = %g, want %g", c.probes, got, c.want)
		}
	}
}

// TestBenchCeilingProbeRSS checks that the probes inside a tg test do not count in its
// peak RSS: each probe here holds 512 MiB, the builtin model's test far less.
func TestBenchCeilingProbeRSS(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector its shadow memory counts in the resident set")
	}
	if !resetPeakRSS() {
		t.Skip("the peak RSS cannot be reset here (/proc/self/clear_refs)")
	}
	const big = 512 << 20
	b := &Bench{Spec: workloads.BenchSpec{Models: []workloads.BenchModel{{Path: "builtin"}}, Prompt: []int{4}, Gen: []int{2}, Reps: 2},
		Open: builtinOpen, Build: "test", CPUInfo: "cpu",
		ReadBandwidth: func(context.Context) (float64, error) {
			buf := make([]byte, big)
			for i := 0; i < len(buf); i += 4096 {
				buf[i] = 1
			}
			return float64(len(buf)), nil
		}}
	res, done := runWorkload(t, context.Background(), b)
	if done.Err != nil {
		t.Fatal(done.Err)
	}
	for _, r := range res.Records {
		if r.PeakRSS <= 0 || r.PeakRSS >= big {
			t.Errorf("%s: peak RSS %d bytes, want below the probes' %d", r.Name(), r.PeakRSS, big)
		}
	}
}
