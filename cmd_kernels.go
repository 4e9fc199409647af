package main

import (
	"context"
	"fmt"

	"llmbench/workloads"
)

var kernelsExamples = []string{
	"llmbench kernels --suite attention-masks",
	"llmbench kernels --suite attention-masks --cases sliding_window,document --seq-len 4096 --window 512 --check",
	"llmbench kernels --suite attention-masks --export masks.md,masks.html",
}

var kernelsGroups = []flagGroup{
	{"suite and shape", []string{"suite", "cases", "batch", "heads", "seq-len", "head-dim", "block-size", "window", "prefix-len", "documents", "t", "threads", "r", "repetitions", "seed", "check"}},
	{"output and telemetry", []string{"export", "data-dir", "device", "sample-interval", "power-limit", "settle-timeout"}},
}

// runKernels is `llmbench kernels`: a kernel benchmark suite on the CPU backend,
// printed as the suite prints it, kept in the store and exported.
func runKernels(ctx context.Context, args []string) error {
	fs := newFlags("kernels", "[--suite attention-masks|paged-attention] [--cases A,B] [--seq-len N] [--heads N] [--head-dim N] [--block-size N] [-t N] [-r N] [--check] [--export FILES]\n"+
		"Default shape (attention-masks): B=1 H=4 S=2048 D=64, block 128: a few seconds per mask on 2 cores (attention-gym's is B=16 H=16 S=8192 on a GPU).", kernelsExamples, kernelsGroups...)
	a := defineKernels(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("kernels", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	limits, err := a.tf.limits()
	if err != nil {
		return usageErr("kernels", err)
	}
	spec := a.spec
	job := workloads.Job{Kernels: &spec, Device: a.tf.device, PowerLimitW: limits}
	return headless(ctx, "kernels", job, a.tf, a.of, nil, terminalProgress(), nil)
}
