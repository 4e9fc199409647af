package main

import (
	"flag"
	"strings"

	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/report"
)

// benchFlags are bench's flags: the spec they fill and the command's own settings.
type benchFlags struct {
	spec                  workloads.BenchSpec
	paths, shapes, types  []string
	out, cacheDir, bwSize string
	ceiling, compare      bool
	bwProbes              int
	alpha                 float64
	tf                    *telemetryFlags
	of                    *outputFlags
	lb                    *llamaBenchFlags
}

// defineBench defines bench's flags (llama-bench's names) on fs.
func defineBench(fs *flag.FlagSet) *benchFlags {
	a := &benchFlags{}
	spec := &a.spec
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
		fs.Var(benchStrings{&a.paths}, n, "GGUF model `files`, comma-separated or repeated (default: the built-in stories260K)")
	}
	fs.Var(benchStrings{&a.shapes}, "shape", "synthetic model `shapes` ("+strings.Join(synth.Shapes(), ", ")+")")
	fs.Var(benchStrings{&a.types}, "type", "synthetic model `types` (Q4_0, Q4_K_M, Q8_0, F16, …)")
	intList(&spec.Prompt, "prompt tokens per pp test (default 512)", "p", "n-prompt")
	intList(&spec.Gen, "generated tokens per tg test (default 128)", "n", "n-gen")
	fs.Var(benchPGs{&spec.PG}, "pg", "prompt then generation test `P,N` (repeatable)")
	intList(&spec.Depth, "prefilled context before each test, untimed (default 0)", "d", "n-depth")
	intList(&spec.Batch, "logical batch size (default 2048)", "b", "batch-size")
	intList(&spec.UBatch, "physical batch: tokens per forward pass (default 512)", "ub", "ubatch-size")
	intList(&spec.Threads, "threads (default 0 = all cores)", "t", "threads")
	for _, n := range []string{"fa", "flash-attn"} {
		fs.Var(benchFA{&spec.FlashAttn}, n, "flash attention `on|off|auto` (1, 0, -1; default auto: on, the CPU engine has it for every model)")
	}
	for _, n := range []string{"ctk", "cache-type-k"} {
		fs.Var(benchStrings{&spec.TypeK}, n, "KV cache `type` of K, as llama.cpp spells it: the engine keeps f16, q8_0, f32 (default f16)")
	}
	for _, n := range []string{"ctv", "cache-type-v"} {
		fs.Var(benchStrings{&spec.TypeV}, n, "KV cache `type` of V (default f16, as llama-bench: the engine needs it equal to -ctk)")
	}
	fs.IntVar(&spec.Reps, "r", workloads.DefaultBenchReps, "repetitions of each test (after one warmup)")
	fs.IntVar(&spec.Reps, "repetitions", workloads.DefaultBenchReps, "same as -r")
	fs.Var(benchSeconds{&spec.Delay}, "delay", "`seconds` to pause before each test")
	fs.BoolVar(&spec.NoWarmup, "no-warmup", false, "skip the warmup run")
	fs.Uint64Var(&spec.Seed, "seed", 0, "seed of the random tokens")
	fs.StringVar(&a.out, "o", "md", "output `format`: "+strings.Join(report.LlamaBenchFormatNames(), ", "))
	fs.StringVar(&a.out, "output", "md", "same as -o")
	fs.StringVar(&a.cacheDir, "cache-dir", "", "synthetic model cache `dir` (default: the user cache dir)")
	fs.BoolVar(&a.ceiling, "ceiling", false, "measure the read bandwidth first and print each tg test against its ceiling")
	fs.StringVar(&a.bwSize, "bw-size", "1GiB", "buffer `size` of the --ceiling probe")
	fs.IntVar(&a.bwProbes, "bw-probes", 5, "probes of the --ceiling measurement (the median counts)")
	fs.BoolVar(&a.compare, "compare", false, "compare two saved -o json/jsonl runs: --compare A.json B.json")
	fs.Float64Var(&a.alpha, "alpha", 0.05, "significance level of --compare")
	a.tf, a.of = addTelemetryFlags(fs), addOutputFlags(fs)
	a.lb = defineLlamaBench(fs, spec)
	return a
}
