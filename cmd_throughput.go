package main

import (
	"context"
	"fmt"

	"llmbench/workloads"
	"llmbench/workloads/jobs"
)

var throughputExamples = []string{
	"llmbench throughput --model llama-tiny --weights-type Q8_0 --kv-cache-type f16 --dataset-path ShareGPT_V3_filtered_500.json \\",
	"    --num-prompts 64 --batch-size 16 --max-cache-length 512 --max-input-length 256 --max-output-length 512",
	"llmbench throughput --model llama-small --weights-type BF16,Q8_0 --dataset-path sharegpt.json   (bfloat16 and int8 rows)",
}

var throughputGroups = []flagGroup{
	{"model and rows", []string{"model", "weights-type", "kv-cache-type", "t", "threads", "cache-dir"}},
	{"JetStream's settings", []string{"batch-size", "max-cache-length", "max-input-length", "max-output-length", "num-prompts", "dataset-path", "seed"}},
	{"output and telemetry", []string{"export", "data-dir", "device", "sample-interval", "power-limit", "settle-timeout"}},
}

// runThroughput is `llmbench throughput`: JetStream's throughput benchmark on the
// in-process engine (a workloads.ThroughputSpec run by workloads/jobs), printed as
// JetStream's table.
func runThroughput(ctx context.Context, args []string) error {
	fs := newFlags("throughput", "--dataset-path FILE [--model M] [--weights-type T,…] [--kv-cache-type K,…] [--batch-size N] [--max-cache-length N] [--max-input-length N] [--max-output-length N] [--num-prompts N]\n"+
		"Every prompt is sent at once; the engine runs --batch-size sequences, each decoding --max-output-length tokens. A cache shorter than input + output runs rolling-window attention, as JetStream.", throughputExamples, throughputGroups...)
	s := workloads.ThroughputSpec{}
	fs.StringVar(&s.Model, "model", "llama-tiny", "`model`: a synthetic shape (written once in BF16, other weight types quantized from it), a GGUF file, or "+workloads.BuiltinModel)
	fs.Var(benchStrings{&s.WeightsTypes}, "weights-type", "weight `types`, one row each, comma-separated (BF16, Q8_0, F16, Q4_0, Q4_K_M, …); default: BF16 for a synthetic shape, the file's own otherwise")
	fs.Var(benchStrings{&s.KVCacheTypes}, "kv-cache-type", "KV cache `types` (f16, q8_0, f32): one for every row or one per weights type; default q8_0 with Q8_0 weights (JetStream's int8), f16 otherwise")
	fs.IntVar(&s.BatchSize, "batch-size", 16, "sequences decoded together (JetStream's --batch_size)")
	fs.IntVar(&s.MaxCacheLength, "max-cache-length", 1024, "KV cache positions per sequence; shorter than input + output runs a rolling window")
	fs.IntVar(&s.MaxInputLength, "max-input-length", 1024, "prompt tokens: longer sharegpt prompts are cut")
	fs.IntVar(&s.MaxOutputLength, "max-output-length", 1024, "tokens decoded for every request (end-of-sequence ignored)")
	fs.IntVar(&s.NumPrompts, "num-prompts", 64, "requests")
	fs.StringVar(&s.DatasetPath, "dataset-path", "", "sharegpt JSON `file`")
	fs.Int64Var(&s.Seed, "seed", 0, "seed of the prompt shuffle")
	for _, n := range []string{"t", "threads"} {
		fs.IntVar(&s.Threads, n, 0, "CPU threads (0 = all cores)")
	}
	cacheDir := fs.String("cache-dir", "", "synthetic and quantized model cache `dir` (default: the user cache dir)/llmbench/synth")
	tf, of := addTelemetryFlags(fs), addOutputFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("throughput", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	limits, err := tf.limits()
	if err != nil {
		return usageErr("throughput", err)
	}
	job := workloads.Job{Throughput: &s, Device: tf.device, PowerLimitW: limits}
	return headless(ctx, "throughput", job, tf, of, func(o *jobs.Options) { o.CacheDir = *cacheDir }, terminalProgress(), nil)
}
