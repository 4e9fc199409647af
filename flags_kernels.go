package main

import (
	"flag"
	"strings"

	"llmbench/workloads"
)

// kernelsFlags are the kernels command's flags: the spec they fill and the output
// and telemetry flags every measuring command shares.
type kernelsFlags struct {
	spec workloads.KernelSpec
	tf   *telemetryFlags
	of   *outputFlags
}

// defineKernels defines the kernels command's flags on fs.
func defineKernels(fs *flag.FlagSet) *kernelsFlags {
	a := &kernelsFlags{}
	s := &a.spec
	fs.StringVar(&s.Suite, "suite", workloads.SuiteAttentionMasks, "`suite` to run: "+strings.Join(workloads.KernelSuites, ", "))
	fs.Var(benchStrings{&s.Cases}, "cases", "run only these `cases`, comma-separated (attention-masks: causal, alibi, sliding_window, prefix_lm, document, softcap, softcap_approx; paged-attention: decode-small, decode-long, varlen-light, …)")
	fs.IntVar(&s.Batch, "batch", workloads.DefaultKernelBatch, "attention batch size B")
	fs.IntVar(&s.Heads, "heads", workloads.DefaultKernelHeads, "attention heads H")
	fs.IntVar(&s.SeqLen, "seq-len", workloads.DefaultKernelSeqLen, "sequence length S (queries and keys)")
	fs.IntVar(&s.HeadDim, "head-dim", workloads.DefaultKernelHeadDim, "head dimension D")
	fs.IntVar(&s.BlockSize, "block-size", workloads.DefaultKernelBlockSize, "block-mask tile side (and the flash kernels' tile)")
	fs.IntVar(&s.Window, "window", workloads.DefaultKernelWindow, "sliding-window mask: the window")
	fs.IntVar(&s.PrefixLen, "prefix-len", workloads.DefaultKernelPrefixLen, "prefix-LM mask: the prefix length")
	fs.IntVar(&s.Documents, "documents", workloads.DefaultKernelDocuments, "document mask: documents per sequence")
	for _, n := range []string{"t", "threads"} {
		fs.IntVar(&s.Threads, n, 0, "CPU threads (0 = all cores)")
	}
	for _, n := range []string{"r", "repetitions"} {
		fs.IntVar(&s.Reps, n, workloads.DefaultKernelReps, "timed repetitions per case after one warmup (the median counts)")
	}
	fs.Uint64Var(&s.Seed, "seed", 0, "seed of the random inputs and document lengths")
	fs.BoolVar(&s.Check, "check", false, "fail (exit 1) when an acceptance check fails: attention-masks: block-sparse beats dense + mask by half the ideal 1/(1 − sparsity) on the sliding_window and document masks; paged-attention: the paths agree, the automatic choice is within 5 % of the better path, partitions win a single sequence of ≥ 8192")
	a.tf, a.of = addTelemetryFlags(fs), addOutputFlags(fs)
	return a
}
