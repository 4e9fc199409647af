package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
)

var benchExamples = []string{
	"llmbench bench -m model.gguf -p 512 -n 128 -r 5",
	"llmbench bench --shape llama-1b --type Q4_0,Q4_K_M,Q8_0,F16 -t 1,2 --ceiling",
	"llmbench bench --compare a.json b.json",
}

var benchGroups = []flagGroup{
	{"llama-bench compatible", []string{"m", "model", "p", "n-prompt", "n", "n-gen", "pg", "d", "n-depth", "b", "batch-size", "ub", "ubatch-size",
		"t", "threads", "fa", "flash-attn", "ctk", "cache-type-k", "ctv", "cache-type-v", "r", "repetitions", "delay", "no-warmup", "o", "output"}},
	{"llmbench additions", []string{"shape", "type", "seed", "cache-dir", "ceiling", "bw-size", "bw-probes", "compare", "alpha",
		"device", "power-limit", "sample-interval", "settle-timeout", "export", "data-dir"}},
}

func runBench(ctx context.Context, args []string) error {
	fs := newFlags("bench", "[-m FILE,… | --shape S --type T,…] [-p N] [-n N] [-pg P,N] [-d N] [-b N] [-ub N] [-t N] [-fa 0,1] [-ctk T] [-ctv T] [-r N] [-o md|csv|json|jsonl|sql] [--power-limit W,…] [--device auto|nvml|fake|none]\n"+
		"       llmbench bench --compare A.json B.json\n"+
		"Lists take commas and ranges (first-last, first-last+step, first-last*factor); every combination runs, as llama-bench.", benchExamples, benchGroups...)
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
	if err := parse(fs, args); err != nil {
		return err
	}
	if *compare {
		if fs.NArg() != 2 {
			return usageErr("bench", errors.New("--compare wants two files: --compare A.json B.json"))
		}
		return benchCompare(os.Stdout, fs.Arg(0), fs.Arg(1), *alpha)
	}
	if fs.NArg() > 0 {
		return usageErr("bench", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if spec.Reps < 1 {
		return usageErr("bench", fmt.Errorf("-r: %d repetitions (minimum 1)", spec.Reps))
	}
	export, ok := report.LlamaBenchFormats[*out]
	if !ok {
		return usageErr("bench", fmt.Errorf("-o: %q is not one of %s", *out, strings.Join(report.LlamaBenchFormatNames(), ", ")))
	}
	for _, p := range paths {
		spec.Models = append(spec.Models, workloads.BenchModel{Path: p})
	}
	switch {
	case len(shapes) > 0 && len(types) == 0:
		return usageErr("bench", errors.New("--shape needs --type (Q4_0, Q4_K_M, Q8_0, F16, …)"))
	case len(types) > 0 && len(shapes) == 0:
		return usageErr("bench", errors.New("--type needs --shape"))
	}
	for _, s := range shapes {
		if _, err := synth.Lookup(s); err != nil {
			return usageErr("bench", fmt.Errorf("--shape: %w", err))
		}
		for _, t := range types {
			if _, err := synth.ParseFileType(t); err != nil {
				return usageErr("bench", fmt.Errorf("--type: %w", err))
			}
			spec.Models = append(spec.Models, workloads.BenchModel{Shape: s, Type: t})
		}
	}
	if len(spec.Models) == 0 {
		spec.Models = []workloads.BenchModel{{Path: workloads.BuiltinModel}}
	}
	limits, err := tf.limits()
	if err != nil {
		return usageErr("bench", err)
	}
	var bo jobs.BenchOptions
	if *ceiling {
		if bo.CeilingBytes, err = jobs.ParseBytes(*bwSize); err != nil {
			return usageErr("bench", fmt.Errorf("--bw-size: %w", err))
		}
		bo.CeilingProbes = *bwProbes
	}
	job := workloads.Job{Bench: &spec, Device: tf.device, PowerLimitW: limits}
	return headless(ctx, "bench", job, tf, of, func(o *jobs.Options) { o.Bench, o.CacheDir = bo, *cacheDir }, terminalProgress(), export)
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
