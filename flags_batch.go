package main

import (
	"flag"
	"strings"

	"llmbench/workloads"
)

// batchFlags are the batch command's flags (TGI's benchmark names where it has
// them): the spec they fill and the output and telemetry flags.
type batchFlags struct {
	spec                     workloads.BatchSpec
	model, cacheDir          string
	warmups                  int
	temp, topP, typical, rep optFloat
	topK                     optInt
	merge                    bool
	tf                       *telemetryFlags
	of                       *outputFlags
}

// defineBatch defines the batch command's flags on fs.
func defineBatch(fs *flag.FlagSet) *batchFlags {
	a := &batchFlags{}
	s := &a.spec
	for _, n := range []string{"m", "model"} {
		fs.StringVar(&a.model, n, workloads.BuiltinModel, "`model`: a GGUF file, builtin:stories260K or synth:SHAPE:TYPE (synth:llama-1b:Q4_0)")
	}
	for _, n := range []string{"s", "sequence-length"} {
		fs.IntVar(&s.SequenceLength, n, workloads.DefaultBatchSequenceLength, "prompt `tokens` of every sequence")
	}
	for _, n := range []string{"d", "decode-length"} {
		fs.IntVar(&s.DecodeLength, n, workloads.DefaultBatchDecodeLength, "`tokens` generated per sequence: the prefill samples the first, then decode-length − 1 decode steps (as TGI)")
	}
	for _, n := range []string{"b", "batch-size"} {
		fs.Var(benchInts{&s.BatchSize}, n, "batch `sizes`, comma-separated or repeated (default 1,2,4,8,16,32)")
	}
	for _, n := range []string{"r", "runs"} {
		fs.IntVar(&s.Runs, n, workloads.DefaultBatchRuns, "timed runs per batch size")
	}
	for _, n := range []string{"w", "warmups"} {
		fs.IntVar(&a.warmups, n, workloads.DefaultBatchWarmups, "untimed runs before each batch size's runs")
	}
	fs.Var(&a.temp, "temperature", "sampling `temperature` (TGI's; unset: greedy unless another warper or --do-sample)")
	fs.Var(&a.topK, "top-k", "sample among the `k` most likely tokens")
	fs.Var(&a.topP, "top-p", "sample among the most likely tokens holding `p` of the probability")
	fs.Var(&a.typical, "typical-p", "typical sampling `p` (refused: the sampler has none)")
	fs.Var(&a.rep, "repetition-penalty", "`penalty` of tokens already in the sequence, prompt included (TGI's)")
	fs.BoolVar(&s.Watermark, "watermark", false, "watermarking (refused: the sampler has none)")
	fs.BoolVar(&s.DoSample, "do-sample", false, "sample (temperature 1 unless given) instead of greedy decoding")
	fs.Uint64Var(&s.Seed, "seed", 0, "sampling seed (sequence i uses seed+i)")
	for _, n := range []string{"t", "threads"} {
		fs.IntVar(&s.Threads, n, 0, "CPU threads (0 = all cores)")
	}
	fs.StringVar(&s.KVType, "kv-cache-type", workloads.DefaultBenchKV, "KV cache `type`: f16, q8_0 or f32")
	fs.StringVar(&s.Label, "label", "", "heading of this run's section in a report (as TGI's \"Tensor Parallel (TP) - 2 GPUs\"; default \"CPU - N threads\")")
	fs.StringVar(&s.Backend, "backend", "inproc", "where to run: inproc (the engine, in this process) or a server: openai, tgi, llamacpp (figures approximated from streamed tokens)")
	for _, n := range []string{"url", "base-url"} {
		fs.StringVar(&s.BaseURL, n, "", "server `URL` (--backend openai|tgi|llamacpp)")
	}
	fs.StringVar(&s.Tokenizer, "tokenizer", "", "GGUF `file` whose tokenizer sizes the prompt for a server (default: the built-in one)")
	fs.StringVar(&a.cacheDir, "cache-dir", "", "synthetic model cache `dir` (default: the user cache dir)")
	fs.BoolVar(&a.merge, "merge", false, "print one report of several runs' JSON exports: --merge A.json B.json …")
	a.tf, a.of = addTelemetryFlags(fs), addOutputFlags(fs)
	return a
}

// batchFlagNames lists the flags of the batch command's groups in its help.
var batchFlagNames = strings.Fields("m model s sequence-length d decode-length b batch-size r runs w warmups temperature top-k top-p typical-p repetition-penalty watermark do-sample seed")
