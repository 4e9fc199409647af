package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/profiles"
	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/power"
	"llmbench/workloads/report"
	runcore "llmbench/workloads/run"
	"llmbench/workloads/telemetry"
)

// benchBuiltin names the built-in model in a bench spec when no model is given.
const benchBuiltin = profiles.BuiltinModel

// benchInts is a repeatable flag of llama-bench integer lists ("1,2", "1-16*2").
type benchInts struct{ v *[]int }

func (f benchInts) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Trim(strings.ReplaceAll(fmt.Sprint(*f.v), " ", ","), "[]")
}

func (f benchInts) Set(s string) error {
	v, err := workloads.ParseIntList(s)
	if err != nil {
		return err
	}
	*f.v = append(*f.v, v...)
	return nil
}

// benchStrings is a repeatable flag of comma-separated names.
type benchStrings struct{ v *[]string }

func (f benchStrings) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Join(*f.v, ",")
}

func (f benchStrings) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x == "" {
			return errors.New("empty item in list")
		}
		*f.v = append(*f.v, x)
	}
	return nil
}

// benchFA is the repeatable -fa flag: 0/1, on/off, true/false, comma-separated.
type benchFA struct{ v *[]int }

func (f benchFA) String() string { return benchInts(f).String() }

func (f benchFA) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "0", "off", "false", "no":
			*f.v = append(*f.v, 0)
		case "1", "on", "true", "yes":
			*f.v = append(*f.v, 1)
		default:
			return fmt.Errorf("%q is not 0 or 1 (on/off)", x)
		}
	}
	return nil
}

// benchPGs is the repeatable -pg P,N flag.
type benchPGs struct{ v *[]workloads.PG }

func (f benchPGs) String() string { return "" }

func (f benchPGs) Set(s string) error {
	pg, err := workloads.ParsePG(s)
	if err != nil {
		return err
	}
	*f.v = append(*f.v, pg)
	return nil
}

// benchSeconds is --delay: seconds ("2", "0.5") or a Go duration ("500ms").
type benchSeconds struct{ v *float64 }

func (f benchSeconds) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f benchSeconds) Set(s string) error {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 {
		*f.v = v
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a number of seconds or a duration such as 500ms", s)
	}
	*f.v = d.Seconds()
	return nil
}

// benchParse parses args, printing a flag error as one line and help on -h.
func benchParse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
	default:
		fmt.Fprintf(os.Stderr, "llmbench %s: %v\n", fs.Name(), err)
	}
	return errUsage
}

// benchUsageErr prints err as the command's one line and returns errUsage.
func benchUsageErr(cmd string, err error) error {
	fmt.Fprintf(os.Stderr, "llmbench %s: %v\n", cmd, err)
	return errUsage
}

func runBench(ctx context.Context, args []string) error {
	fs := newFlags("bench", "[-m FILE,… | --shape S --type T,…] [-p N] [-n N] [-pg P,N] [-d N] [-b N] [-ub N] [-t N] [-fa 0,1] [-ctk T] [-ctv T] [-r N] [-o md|csv|json|jsonl|sql] [--power-limit W,…] [--device auto|nvml|fake|none]\n"+
		"       llmbench bench --compare A.json B.json\n"+
		"Lists take commas and ranges (first-last, first-last+step, first-last*factor); every combination runs, as llama-bench.")
	var spec workloads.BenchSpec
	var paths, shapes, types []string
	intList := func(v *[]int, usage string, names ...string) {
		for i, n := range names {
			u := usage
			if i > 0 {
				u = "same as -" + names[0]
			}
			fs.Var(benchInts{v}, n, u)
		}
	}
	for _, n := range []string{"m", "model"} {
		fs.Var(benchStrings{&paths}, n, "GGUF model `files`, comma-separated or repeated (default: the built-in stories260K)")
	}
	fs.Var(benchStrings{&shapes}, "shape", "synthetic model `shapes` ("+strings.Join(synth.Shapes(), ", ")+")")
	fs.Var(benchStrings{&types}, "type", "synthetic model `types` (Q4_0, Q4_K_M, Q8_0, F16, …)")
	intList(&spec.Prompt, "prompt tokens per pp test (default 512)", "p", "n-prompt")
	intList(&spec.Gen, "generated tokens per tg test (default 128)", "n", "n-gen")
	fs.Var(benchPGs{&spec.PG}, "pg", "prompt then generation test `P,N` (repeatable)")
	intList(&spec.Depth, "prefilled context before each test, untimed (default 0)", "d", "n-depth")
	intList(&spec.Batch, "logical batch size (default 2048)", "b", "batch-size")
	intList(&spec.UBatch, "physical batch: tokens per forward pass (default 512)", "ub", "ubatch-size")
	intList(&spec.Threads, "threads (default 0 = all cores)", "t", "threads")
	for _, n := range []string{"fa", "flash-attn"} {
		fs.Var(benchFA{&spec.FlashAttn}, n, "flash attention `0,1` (default 0)")
	}
	for _, n := range []string{"ctk", "cache-type-k"} {
		fs.Var(benchStrings{&spec.TypeK}, n, "KV cache `type` of K: f16, q8_0 (default f16)")
	}
	for _, n := range []string{"ctv", "cache-type-v"} {
		fs.Var(benchStrings{&spec.TypeV}, n, "KV cache `type` of V (default: as -ctk)")
	}
	fs.IntVar(&spec.Reps, "r", workloads.DefaultBenchReps, "repetitions of each test (after one warmup)")
	fs.IntVar(&spec.Reps, "repetitions", workloads.DefaultBenchReps, "same as -r")
	fs.Var(benchSeconds{&spec.Delay}, "delay", "`seconds` to pause before each test")
	fs.BoolVar(&spec.NoWarmup, "no-warmup", false, "skip the warmup run")
	fs.Uint64Var(&spec.Seed, "seed", 0, "seed of the random tokens")
	out := fs.String("o", "md", "output `format`: "+strings.Join(report.LlamaBenchFormatNames(), ", "))
	fs.StringVar(out, "output", "md", "same as -o")
	cacheDir := fs.String("cache-dir", "", "synthetic model cache `dir` (default: the user cache dir)")
	ceiling := fs.Bool("ceiling", false, "measure the read bandwidth first and print each tg test against its ceiling")
	bwSize := fs.String("bw-size", "1GiB", "buffer `size` of the --ceiling probe")
	bwProbes := fs.Int("bw-probes", 5, "probes of the --ceiling measurement (the median counts)")
	compare := fs.Bool("compare", false, "compare two saved -o json/jsonl runs: --compare A.json B.json")
	alpha := fs.Float64("alpha", 0.05, "significance level of --compare")
	tf := addTelemetryFlags(fs)
	of := addOutputFlags(fs)
	if err := benchParse(fs, args); err != nil {
		return err
	}
	if *compare {
		if fs.NArg() != 2 {
			return benchUsageErr("bench", errors.New("--compare wants two files: --compare A.json B.json"))
		}
		return benchCompare(os.Stdout, fs.Arg(0), fs.Arg(1), *alpha)
	}
	if fs.NArg() > 0 {
		return benchUsageErr("bench", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if spec.Reps < 1 {
		return benchUsageErr("bench", fmt.Errorf("-r: %d repetitions (minimum 1)", spec.Reps))
	}
	export, ok := report.LlamaBenchFormats[*out]
	if !ok {
		return benchUsageErr("bench", fmt.Errorf("-o: %q is not one of %s", *out, strings.Join(report.LlamaBenchFormatNames(), ", ")))
	}
	for _, p := range paths {
		spec.Models = append(spec.Models, workloads.BenchModel{Path: p})
	}
	switch {
	case len(shapes) > 0 && len(types) == 0:
		return benchUsageErr("bench", errors.New("--shape needs --type (Q4_0, Q4_K_M, Q8_0, F16, …)"))
	case len(types) > 0 && len(shapes) == 0:
		return benchUsageErr("bench", errors.New("--type needs --shape"))
	}
	for _, s := range shapes {
		if _, err := synth.Lookup(s); err != nil {
			return benchUsageErr("bench", fmt.Errorf("--shape: %w", err))
		}
		for _, t := range types {
			if _, err := synth.ParseFileType(t); err != nil {
				return benchUsageErr("bench", fmt.Errorf("--type: %w", err))
			}
			spec.Models = append(spec.Models, workloads.BenchModel{Shape: s, Type: t})
		}
	}
	if len(spec.Models) == 0 {
		spec.Models = []workloads.BenchModel{{Path: benchBuiltin}}
	}
	if err := micro.Validate(spec); err != nil {
		return benchUsageErr("bench", err)
	}
	limits, err := tf.limits()
	if err != nil {
		return benchUsageErr("bench", err)
	}
	exports, err := of.exports()
	if err != nil {
		return benchUsageErr("bench", err)
	}
	dev, err := openTelemetry(tf.device)
	if err != nil {
		return benchUsageErr("bench", err)
	}
	defer dev.Close()
	job := &benchJob{spec: spec, dev: dev, limits: limits, settle: tf.settle, interval: tf.interval, cacheDir: *cacheDir}
	if *ceiling {
		size, err := parseBytes(*bwSize)
		if err != nil {
			return benchUsageErr("bench", fmt.Errorf("--bw-size: %w", err))
		}
		threads := 0
		if len(spec.Threads) > 0 {
			threads = spec.Threads[len(spec.Threads)-1]
		}
		probes := *bwProbes
		job.readBW = func(ctx context.Context) (float64, error) {
			bw, err := telemetry.MeasureReadBandwidth(ctx, size, threads, probes)
			return bw.Median, err
		}
	}
	run := profiles.Run{Bench: &spec, Device: tf.device, PowerLimitW: limits}
	return job.runAndReport(ctx, run, of, exports, export)
}

// benchJob is one bench run with everything it runs under: the spec, the telemetry
// device, the power limits to sweep and where synthetic models are cached.
type benchJob struct {
	spec     workloads.BenchSpec
	dev      *telemetryDevice
	limits   []float64
	settle   time.Duration
	interval time.Duration // telemetry period (0: none)
	cacheDir string
	readBW   func(ctx context.Context) (float64, error) // --ceiling
	// live is the TUI run this job goes on inside (nil: headless): each power limit's
	// bench runs on its Reporter and the job's messages go to its log.
	live *runcore.Reporter
}

// runAndReport runs the job kept in the results store, prints the result with
// print (llama-bench's -o format) and writes the --export files.
func (j *benchJob) runAndReport(ctx context.Context, run profiles.Run, of *outputFlags, exports []string, print report.LlamaBenchFunc) error {
	if len(j.limits) > 0 {
		if err := power.Check(j.dev.gpus, j.dev.note, j.limits, j.dev.stateFile()); err != nil {
			return err // one line saying why; nothing changed
		}
	}
	rec := of.startRecord("bench", run, j.dev)
	started := time.Now()
	all, err := j.execute(ctx, rec)
	doc := report.Document{Title: run.Title(), Started: started, Env: recordEnv(j.dev), Bench: all, Partial: all.Partial}
	if len(all.Records) > 0 || err == nil {
		if xerr := print(os.Stdout, all); xerr != nil {
			return xerr
		}
	}
	if len(all.Records) == 0 && err != nil {
		exports = nil // nothing measured: no file to write
	}
	if xerr := rec.finish("bench", doc, err, exports); xerr != nil && err == nil {
		err = xerr
	}
	if all.Partial {
		return context.Canceled
	}
	return err
}

// execute runs the bench at each power limit (once when none), handing every
// repetition to rec as it finishes, and returns every record (partial when
// interrupted, with context.Canceled).
func (j *benchJob) execute(ctx context.Context, rec *record) (*micro.Result, error) {
	spec, dev := j.spec, j.dev
	logTo(j.live, os.Stderr, "bench: telemetry: %s", dev.note)
	cpu := telemetry.CPUInfo()
	w := &micro.Bench{
		Spec:          spec,
		Open:          benchOpener(j.cacheDir),
		Build:         version,
		CPUInfo:       cpu.Model,
		ReadBandwidth: j.readBW,
	}
	if dev.gpus != nil && dev.gpus.Count() > 0 {
		if g, err := dev.gpus.Read(0); err == nil {
			w.GPUInfo = g.Name
		}
	}
	var opts []runcore.Option
	if j.interval > 0 {
		opts = append(opts, runcore.WithSampler(dev.sampler, j.interval))
	}
	all := &micro.Result{Spec: spec.WithDefaults(), TelemetryNote: dev.note}
	var partial bool
	err := dev.sweep(ctx, "bench", j.limits, j.settle, func(ctx context.Context, watts float64) error {
		w.PowerLimitW = watts
		if rec != nil {
			base := len(all.Records)
			w.Observe = func(test int, r micro.Record) { rec.w.BenchRecord(base+test, r) }
		}
		var done runcore.Done
		if j.live != nil {
			done = runOn(ctx, j.live, w)
		} else {
			_, events := runcore.Start(ctx, w, opts...)
			done = benchEvents(os.Stderr, events)
		}
		res, _ := done.Result.(*micro.Result)
		if res == nil {
			if done.Err != nil {
				return done.Err
			}
			return errors.New("bench: no result")
		}
		all.Records = append(all.Records, res.Records...)
		all.ReadBandwidth = max(all.ReadBandwidth, res.ReadBandwidth)
		partial = partial || done.Partial
		if done.Partial {
			return context.Canceled
		}
		return done.Err
	})
	all.Partial = partial
	if partial {
		err = context.Canceled
	}
	return all, err
}

// runProfileBench runs a profile's bench run headless: the markdown table on
// stdout, kept in the store, exported.
func runProfileBench(ctx context.Context, r profiles.Run, of *outputFlags, exports []string) error {
	if err := micro.Validate(*r.Bench); err != nil {
		return err
	}
	dev, err := openTelemetry(cmpStr(r.Device, "auto"))
	if err != nil {
		return err
	}
	defer dev.Close()
	job := &benchJob{spec: *r.Bench, dev: dev, limits: r.PowerLimitW, settle: 15 * time.Second, interval: telemetry.DefaultInterval}
	return job.runAndReport(ctx, r, of, exports, report.LlamaBenchFormats["md"])
}

// cmpStr returns s, or def when s is empty.
func cmpStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// telemetryFlags are the telemetry and power-limit flags of bench and serve-bench.
type telemetryFlags struct {
	device, limitList string
	interval, settle  time.Duration
}

func addTelemetryFlags(fs *flag.FlagSet) *telemetryFlags {
	t := &telemetryFlags{}
	fs.StringVar(&t.device, "device", "auto", "GPUs for telemetry and power limits: auto (NVML when present), nvml, fake (scripted H100 for tests) or none")
	fs.StringVar(&t.limitList, "power-limit", "", "run everything at each GPU power limit in `watts` (600,500,…), restoring the original limit afterwards (needs root and NVML)")
	fs.DurationVar(&t.interval, "sample-interval", telemetry.DefaultInterval, "telemetry sampling period on the run clock (0 = no telemetry)")
	fs.DurationVar(&t.settle, "settle-timeout", 15*time.Second, "longest wait for the power draw to settle after setting a limit")
	return t
}

// limits parses --power-limit (nil when not given).
func (t *telemetryFlags) limits() ([]float64, error) {
	if t.interval < 0 {
		return nil, fmt.Errorf("--sample-interval %v is negative", t.interval)
	}
	if t.limitList == "" {
		return nil, nil
	}
	l, err := power.ParseLimits(t.limitList)
	if err != nil {
		return nil, fmt.Errorf("--power-limit: %w", err)
	}
	return l, nil
}

// benchOpener loads the models of a bench: files, synthetic models (written to the
// cache on first use) and the built-in model.
func benchOpener(cacheDir string) micro.OpenFunc {
	return func(ctx context.Context, m workloads.BenchModel, opts engine.Options, progress func(done, total int64)) (*engine.Engine, string, error) {
		switch {
		case m.Path == benchBuiltin:
			e, err := engine.LoadBytes(ctx, builtin.Name, builtin.Stories260K, opts)
			return e, builtin.Name, err
		case m.Shape != "":
			path, err := synth.Ensure(ctx, cacheDir, m.Shape, m.Type, synth.DefaultSeed, progress)
			if err != nil {
				return nil, "", err
			}
			e, err := engine.Load(ctx, path, opts)
			return e, path, err
		}
		e, err := engine.Load(ctx, m.Path, opts)
		return e, m.Path, err
	}
}

// benchEvents shows a run's progress on w (a bar redrawn in place on a terminal, a
// line per new step otherwise) and returns its Done.
func benchEvents(w *os.File, events <-chan runcore.Event) runcore.Done {
	tty := false
	if fi, err := w.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	var done runcore.Done
	last, drawn, live := "", false, ""
	for ev := range events {
		switch e := ev.(type) {
		case runcore.Telemetry:
			if r, ok := e.Data.(telemetry.Reading); ok && tty {
				live = liveTelemetry(r)
			}
		case runcore.Progress:
			line := fmt.Sprintf("bench: [%d/%.0f] %s", min(int(e.Done)+1, int(e.Total)), e.Total, e.Label)
			if tty {
				fmt.Fprintf(w, "\r\x1b[Kbench: %3.0f%%|%s| %d/%.0f %s%s", 100*e.Done/max(e.Total, 1), bar(e.Done, e.Total, 20),
					min(int(e.Done)+1, int(e.Total)), e.Total, e.Label, live)
				drawn = true
			} else if line != last {
				fmt.Fprintln(w, line)
			}
			last = line
		case runcore.Log:
			if tty && drawn {
				fmt.Fprint(w, "\r\x1b[K")
				drawn = false
			}
			fmt.Fprintf(w, "bench: %s\n", e.Text)
		case runcore.Done:
			done = e
		}
	}
	if tty && drawn {
		fmt.Fprint(w, "\r\x1b[K")
	}
	return done
}

// liveTelemetry is the brief reading a terminal progress line ends with.
func liveTelemetry(r telemetry.Reading) string {
	if w, ok := r.GPUPowerW(); ok {
		g := r.GPUs[0]
		return fmt.Sprintf(" · %s %.0f W %d°C %d MHz", r.GPULabel(), w, g.TempC, g.SMClockMHz)
	}
	if r.CPU.HasEnergy {
		return fmt.Sprintf(" · CPU %.0f W %.0f%%", r.CPU.PowerW, r.CPU.UtilAll)
	}
	return fmt.Sprintf(" · CPU %.0f%%", r.CPU.UtilAll)
}

// benchCompare prints the comparison of two saved runs.
func benchCompare(w io.Writer, a, b string, alpha float64) error {
	read := func(path string) (*report.LlamaBenchRun, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return report.ReadLlamaBench(path, f)
	}
	ra, err := read(a)
	if err != nil {
		return err
	}
	rb, err := read(b)
	if err != nil {
		return err
	}
	c, err := report.CompareLlamaBench(ra, rb, alpha)
	if err != nil {
		return err
	}
	return report.LlamaBenchCompareMarkdown(w, c)
}

// parseBytes parses a size such as "1GiB", "64MiB", "512M" or "1048576".
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("%q is not a size such as 1GiB or 64MiB", s)
	}
	return int64(v * float64(mult)), nil
}
