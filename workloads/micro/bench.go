package micro

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/power"
	"llmbench/workloads/run"
	"llmbench/workloads/telemetry"
)

// OpenFunc loads model m with opts; the caller decides where files come from (a path,
// the synthetic-model cache, the built-in model), what the model is called, and
// reports the progress of writing a synthetic model itself.
type OpenFunc func(ctx context.Context, m workloads.BenchModel, opts engine.Options) (e *engine.Engine, filename string, err error)

// Bench is the llama-bench workload: run it with run.Start; its result is a *Result.
type Bench struct {
	Spec workloads.BenchSpec
	Open OpenFunc
	// Build identifies this program in every record (build_commit).
	Build string
	// CPUInfo and GPUInfo describe the machine (cpu_info, gpu_info).
	CPUInfo, GPUInfo string
	// PowerLimitW is stamped on every record (the GPU limit of this run, 0 when
	// unchanged).
	PowerLimitW float64
	// EnergyDevice names the device whose energy the records count (see
	// telemetry.ParseEnergyDevice); empty: the device the engine computes on, the
	// CPU packages (RAPL) for the CPU backend. A GPU sampled beside the CPU engine
	// never counts.
	EnergyDevice string
	// ReadBandwidth, when set, measures the machine's read bandwidth (bytes per second)
	// before the tests, and in each tg test before every timed repetition and after
	// the last, so tg results can be read against their ceiling.
	ReadBandwidth func(ctx context.Context) (float64, error)
	// Observe, when set, is called with a test's record so far after each timed
	// repetition and once more when the test ends (test: its number in the run), so a
	// results store keeps every sample even if the process dies mid-run.
	Observe func(test int, rec Record)
	// Placement is the process-wide CPU placement of the run (--prio, --numa).
	Placement Placement
	// Steps, when set, receives llama-bench's --progress lines ("llama-bench:
	// benchmark 1/4: prompt run 2/5").
	Steps func(line string)
	// Verbose logs each test's engine details (llama-bench's -v).
	Verbose bool
}

// Name implements run.Workload.
func (b *Bench) Name() string { return "bench" }

// energyDevice is the device whose energy a test counts: EnergyDevice when set, else
// the device of the engine's backend (backend: its name, "cpu/avx2", "cuda/…").
func (b *Bench) energyDevice(backend string) string {
	if b.EnergyDevice != "" {
		return b.EnergyDevice
	}
	if strings.HasPrefix(backend, "cuda") {
		return "gpu:0"
	}
	return telemetry.EnergyCPU
}

// Run implements run.Workload: it runs every test of the cross product and returns a
// *Result, holding the tests finished so far when ctx is cancelled or a test fails.
func (b *Bench) Run(ctx context.Context, r *run.Reporter) (any, error) {
	spec := b.Spec.WithDefaults()
	res := &Result{Spec: spec}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	insts := Expand(spec)
	for _, in := range insts {
		if err := checkInstance(in); err != nil {
			return res, err
		}
	}
	undo, err := b.place(r)
	if err != nil {
		return res, err
	}
	defer undo()
	if b.ReadBandwidth != nil {
		r.Progress(0, float64(len(insts)), "tests", "measuring read bandwidth")
		bw, err := b.ReadBandwidth(ctx)
		if err != nil {
			return res, fmt.Errorf("read bandwidth: %w", err)
		}
		res.ReadBandwidth = bw
		r.Logf("read bandwidth: %.1f GB/s", bw/1e9)
	}
	var (
		e     *engine.Engine
		cur   Instance
		fname string
		facts modelFacts
	)
	defer func() {
		if e != nil {
			e.Close()
		}
	}()
	for i, in := range insts {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if e == nil || !in.sameEngine(cur) {
			if e != nil {
				e.Close()
				e = nil
			}
			r.Progress(float64(i), float64(len(insts)), "tests", "loading "+in.Model.String())
			var err error
			e, fname, err = b.Open(ctx, in.Model, engineOptions(in))
			if err != nil {
				return res, err
			}
			cur, facts = in, describe(e)
		}
		var probe func(context.Context) (float64, error)
		if in.NPrompt == 0 && in.NGen > 0 {
			probe = b.ReadBandwidth
		}
		b.step(i, len(insts), "starting")
		rec, err := b.runTest(ctx, r, e, in, i, len(insts), fname, facts, probe)
		if rec != nil {
			res.Records = append(res.Records, *rec)
		}
		if err != nil {
			return res, err
		}
	}
	r.Progress(float64(len(insts)), float64(len(insts)), "tests", "done")
	return res, nil
}

// place applies --numa and --prio to the process and returns the function undoing
// them (a failure to undo is logged: raising the priority back needs CAP_SYS_NICE).
func (b *Bench) place(r *run.Reporter) (func(), error) {
	cpus, err := numaCPUs(b.Placement.NUMA)
	if err != nil {
		return nil, err
	}
	unNUMA, err := setAffinity(cpus)
	if err != nil {
		return nil, fmt.Errorf("--numa %s: %w", b.Placement.NUMA, err)
	}
	if len(cpus) > 0 {
		r.Logf("--numa %s: CPUs %s", b.Placement.NUMA, cpuList(cpus))
	}
	unPrio, err := setNice(prioNice(b.Placement.Prio))
	if err != nil {
		_ = unNUMA()
		return nil, fmt.Errorf("--prio %d: %w", b.Placement.Prio, err)
	}
	return func() {
		if err := unPrio(); err != nil {
			r.Logf("--prio %d: could not restore the nice value: %v", b.Placement.Prio, err)
		}
		if err := unNUMA(); err != nil {
			r.Logf("--numa: could not restore the CPU set: %v", err)
		}
	}, nil
}

// step sends one --progress line for test idx of total.
func (b *Bench) step(idx, total int, what string) {
	if b.Steps != nil {
		b.Steps(fmt.Sprintf("llama-bench: benchmark %d/%d: %s", idx+1, total, what))
	}
}

// checkInstance rejects what the engine cannot do, before anything runs.
func checkInstance(in Instance) error {
	for _, c := range []struct{ flag, v string }{{"-ctk", in.TypeK}, {"-ctv", in.TypeV}} {
		if err := workloads.CheckKVType(c.v); err != nil {
			return fmt.Errorf("%s: %w", c.flag, err)
		}
	}
	if in.TypeK != in.TypeV {
		return fmt.Errorf("-ctk %s with -ctv %s: the engine keeps K and V in one type (-ctv defaults to f16, as llama-bench's: give -ctv %s)", in.TypeK, in.TypeV, in.TypeK)
	}
	if _, err := maskCPUs(in); err != nil {
		return err
	}
	return nil
}

func engineOptions(in Instance) engine.Options {
	kv, _ := kernels.ParseDType(in.TypeK)
	return engine.Options{Threads: in.Threads, Batch: in.ubatch(), KVType: kv, KVTypeSet: true, FlashAttn: in.FlashAttn != 0, NoMmap: in.UseMmap == 0}
}

// runTest runs one instance: warmup, depth prefill (untimed, once), then the timed
// repetitions. It returns the record (partial when interrupted after a repetition).
// probe, when set, measures the read bandwidth before every repetition and after the
// last (Record.ReadBandwidth).
func (b *Bench) runTest(ctx context.Context, r *run.Reporter, e *engine.Engine, in Instance, idx, total int, fname string, facts modelFacts, probe func(context.Context) (float64, error)) (*Record, error) {
	need := in.NDepth + in.NPrompt + in.NGen
	if limit := e.Options().Context; need > limit {
		return nil, fmt.Errorf("%s: needs %d positions, but %s holds %d", in.Name(), need, fname, limit)
	}
	spec := b.Spec.WithDefaults()
	label := func(what string) string {
		return strings.TrimSpace(fmt.Sprintf("%s t=%d fa=%d %s", in.Name(), e.Backend().Threads(), in.FlashAttn, what))
	}
	if spec.Delay > 0 {
		r.Progress(float64(idx), float64(total), "tests", label("delay"))
		t := time.NewTimer(time.Duration(spec.Delay * float64(time.Second)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if err := setPoll(e, in); err != nil {
		return nil, err
	}
	cpus, _ := maskCPUs(in)
	unmask, err := setAffinity(cpus)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := unmask(); err != nil {
			r.Logf("-C %s: could not restore the CPU set: %v", in.CPUMask, err)
		}
	}()
	// The previous test's session is garbage now: hand it back to the system before
	// this test allocates its own, so that the peak RSS below is this test's (weights,
	// its KV cache and scratch), not the sum of both.
	debug.FreeOSMemory()
	sess, err := e.NewSession(need)
	if err != nil {
		return nil, err
	}
	resetPeakRSS()
	st := in.Settings
	rec := &Record{
		CPUMask: st.CPUMask, CPUStrict: st.CPUStrict == 1, Poll: st.Poll, NGPULayers: st.NGPULayers, NCPUMoE: st.NCPUMoE,
		SplitMode: st.SplitMode, MainGPU: st.MainGPU, NoKVOffload: st.NoKVOffload == 1, Devices: st.Devices,
		TensorSplit: st.TensorSplit, Overrides: st.Overrides, UseMmap: st.UseMmap == 1, Embeddings: st.Embeddings == 1,
		NoOpOffload: st.NoOpOffload, NoHost: st.NoHost == 1, FitTarget: st.FitTarget, FitMinCtx: st.FitMinCtx,
		BuildCommit: b.Build, CPUInfo: b.CPUInfo, GPUInfo: b.GPUInfo,
		Backends:      backendsName(e.Backend().Name()),
		BackendImpl:   kernels.ImplName(e.Backend(), facts.matTypes),
		ModelFilename: fname, ModelType: facts.typ, ModelSize: facts.size, ModelNParams: facts.params,
		NBatch: in.NBatch, NUBatch: in.NUBatch, NThreads: e.Backend().Threads(),
		TypeK: in.TypeK, TypeV: in.TypeV, FlashAttn: in.FlashAttn,
		NPrompt: in.NPrompt, NGen: in.NGen, NDepth: in.NDepth,
		TestTime:            time.Now().UTC().Format("2006-01-02T15:04:05Z"),
		KVCacheBytes:        sess.KVBytes(),
		WeightBytesPerToken: facts.weightBytes,
		SamplesNs:           []uint64{},
		PowerLimitW:         b.PowerLimitW,
	}
	rec.FLOPsPerRep = flops(e, facts, in.NDepth, in.NPrompt, in.NBatch, in.ubatch()) +
		float64(in.NGen)*flops(e, facts, 0, 1, 1, 1) +
		genAttnFLOPs(e, in.NDepth+in.NPrompt, in.NGen)
	seed := spec.Seed ^ uint64(idx)*0x9E3779B97F4A7C15
	rng := rand.New(rand.NewPCG(seed, 0x6c6c6d62656e6368))
	t := tokens{rng: rng, vocab: e.Tok.VocabSize(), bos: -1}
	if e.Tok.AddBOS() {
		t.bos = e.Tok.BOS()
	}
	progress := func(rep int, what string) {
		frac := float64(rep) / float64(spec.Reps+1)
		r.Progress(float64(idx)+frac, float64(total), "tests", label(what))
	}
	// The probes' buffer is garbage once a probe returns: it is handed back to the
	// system and the peak reset after each probe, so that the peak RSS (the highest of
	// the stretches between probes) stays the test's own.
	var peak int64
	measure := func(rep int) error {
		progress(rep, "measuring read bandwidth")
		peak = max(peak, peakRSS())
		bw, err := probe(ctx)
		debug.FreeOSMemory()
		resetPeakRSS()
		if err != nil {
			return err
		}
		rec.ReadBandwidthProbes = append(rec.ReadBandwidthProbes, bw)
		rec.ReadBandwidth = BracketMean(rec.ReadBandwidthProbes)
		return nil
	}
	// interrupted ends the test on err: a partial record when ctx was cancelled after a
	// repetition finished, else err alone.
	interrupted := func(err error) (*Record, error) {
		if len(rec.SamplesNs) > 0 && errors.Is(err, ctx.Err()) {
			rec.Partial = true
			rec.PeakRSS = max(peak, peakRSS())
			return rec, err
		}
		return nil, err
	}
	if !spec.NoWarmup {
		progress(0, "warmup")
		if in.NPrompt > 0 {
			b.step(idx, total, "warmup prompt run")
			if err := t.prompt(ctx, sess, in.NPrompt, in.NBatch); err != nil {
				return nil, err
			}
		}
		if in.NGen > 0 {
			b.step(idx, total, "warmup generation run")
			if err := t.gen(ctx, sess, 1); err != nil {
				return nil, err
			}
		}
	}
	sess.Reset()
	if in.NDepth > 0 {
		progress(0, "depth")
		b.step(idx, total, "depth run")
		if err := t.prompt(ctx, sess, in.NDepth, in.NBatch); err != nil {
			return nil, err
		}
	}
	// Telemetry readings at the edges of the timed repetitions bound the energy span.
	first, sampled := r.SampleNow()
	defer func() {
		if sampled && len(rec.SamplesNs) > 0 {
			last, _ := r.SampleNow()
			rec.Telemetry = power.Summary(r.Telemetry(first.At, last.At), b.energyDevice(e.Backend().Name()))
		}
	}()
	for rep := range spec.Reps {
		if probe != nil {
			if err := measure(rep + 1); err != nil {
				return interrupted(fmt.Errorf("read bandwidth: %w", err))
			}
		}
		progress(rep+1, fmt.Sprintf("rep %d/%d", rep+1, spec.Reps))
		sess.Truncate(in.NDepth)
		if in.NPrompt > 0 {
			b.step(idx, total, fmt.Sprintf("prompt run %d/%d", rep+1, spec.Reps))
		}
		if in.NGen > 0 {
			b.step(idx, total, fmt.Sprintf("generation run %d/%d", rep+1, spec.Reps))
		}
		t0 := time.Now()
		if in.NPrompt > 0 {
			err = t.prompt(ctx, sess, in.NPrompt, in.NBatch)
		}
		if err == nil && in.NGen > 0 {
			err = t.gen(ctx, sess, in.NGen)
		}
		el := time.Since(t0)
		if err != nil {
			return interrupted(err)
		}
		rec.SamplesNs = append(rec.SamplesNs, uint64(max(el, 1)))
		if b.Observe != nil {
			b.Observe(idx, *rec)
		}
		r.Snapshot(RepSnapshot{Test: in.Name(), Rep: rep + 1, Reps: spec.Reps, Tokens: in.NPrompt + in.NGen, Elapsed: el})
	}
	rec.PeakRSS = max(peak, peakRSS())
	if probe != nil {
		if err := measure(spec.Reps); err != nil {
			return interrupted(fmt.Errorf("read bandwidth: %w", err))
		}
	}
	if b.Observe != nil {
		b.Observe(idx, *rec)
	}
	r.Logf("%s: %.2f ± %.2f t/s", label(""), rec.AvgTs(), rec.StddevTs())
	if b.Verbose {
		where := "all CPUs"
		if len(cpus) > 0 {
			where = "CPUs " + cpuList(cpus)
		}
		r.Logf("%s: backend %s, load mode %s, KV cache %s/%s %d bytes, peak RSS %d bytes, poll %d, %s", in.Name(), rec.BackendImpl,
			rec.LoadMode(), rec.TypeK, rec.TypeV, rec.KVCacheBytes, rec.PeakRSS, in.Poll, where)
	}
	return rec, nil
}

// genAttnFLOPs is the attention work of generating n tokens after ctx positions beyond
// what flops(…, 0, 1, …) counts per token (which assumes position 0).
func genAttnFLOPs(e *engine.Engine, ctx, n int) float64 {
	if n <= 0 {
		return 0
	}
	m := e.Model
	// token i (0-based) sits at position ctx+i and sees ctx+i+1 keys; the per-token
	// flops above counted 1 key each.
	extra := float64(n)*float64(ctx) + float64(n)*float64(n-1)/2
	return 4 * float64(m.Heads) * float64(m.HeadDim) * float64(m.Layers) * extra
}

// backendsName turns a backend name ("cpu/avx2") into llama-bench's backends field
// ("CPU").
func backendsName(name string) string {
	base, _, _ := strings.Cut(name, "/")
	return strings.ToUpper(base)
}

// tokens draws the random token ids tests evaluate, as llama-bench does: BOS first
// when the model adds one, uniform ids otherwise.
type tokens struct {
	rng   *rand.Rand
	vocab int
	bos   int32 // -1 when the model adds no BOS
	buf   []int32
}

func (t *tokens) next() int32 { return int32(t.rng.IntN(t.vocab)) }

// prompt evaluates n random tokens in chunks of batch (the engine splits each chunk
// into forward passes of its ubatch).
func (t *tokens) prompt(ctx context.Context, s *engine.Session, n, batch int) error {
	if cap(t.buf) < min(n, batch) {
		t.buf = make([]int32, min(n, batch))
	}
	for done := 0; done < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(batch, n-done)
		chunk := t.buf[:k]
		for i := range chunk {
			chunk[i] = t.next()
		}
		if done == 0 && t.bos >= 0 {
			chunk[0] = t.bos
		}
		if _, err := s.Eval(chunk); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// gen evaluates n tokens one forward pass each, with no sampling: the next token is
// random.
func (t *tokens) gen(ctx context.Context, s *engine.Session, n int) error {
	tok := []int32{t.next()}
	if t.bos >= 0 {
		tok[0] = t.bos
	}
	for range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := s.Eval(tok); err != nil {
			return err
		}
		tok[0] = t.next()
	}
	return nil
}

// Validate checks spec and every test of its cross product before anything runs, so a
// bad value is reported at once, naming its flag.
func Validate(spec workloads.BenchSpec) error {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	for _, in := range Expand(spec) {
		if err := checkInstance(in); err != nil {
			return err
		}
	}
	return nil
}
