package main

import (
	"context"
	"errors"
	"flag"
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
	{"llama-bench compatible: CPU placement, output, model source", llamaBenchGroupNames},
	{"llama-bench compatible: GPU settings (recorded, no effect on the CPU engine)", gpuOnlyFlags},
	{"llmbench additions", []string{"shape", "type", "seed", "cache-dir", "ceiling", "bw-size", "bw-probes", "compare", "alpha",
		"device", "power-limit", "sample-interval", "settle-timeout", "export", "data-dir"}},
}

func runBench(ctx context.Context, args []string) error {
	fs := newFlags("bench", "[-m FILE,… | --shape S --type T,…] [-p N] [-n N] [-pg P,N] [-d N] [-b N] [-ub N] [-t N] [-fa 0,1] [-ctk T] [-ctv T] [-r N] [-o md|csv|json|jsonl|sql] [--power-limit W,…] [--device auto|nvml|fake|none]\n"+
		"       llmbench bench --compare A.json B.json\n"+
		"Lists take commas and ranges (first-last, first-last+step, first-last*factor); every combination runs, as llama-bench.", benchExamples, benchGroups...)
	a := defineBench(fs)
	if err := parse(fs, llamaBenchArgs(args)); err != nil {
		return err
	}
	if a.lb.listDevices {
		return jobs.ListDevices(os.Stdout)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	notes, err := a.lb.finish(&a.spec, set)
	if err != nil {
		return usageErr("bench", err)
	}
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "llmbench bench: "+n)
	}
	spec, paths, shapes, types := a.spec, a.paths, a.shapes, a.types
	if a.compare {
		if fs.NArg() != 2 {
			return usageErr("bench", errors.New("--compare wants two files: --compare A.json B.json"))
		}
		return benchCompare(os.Stdout, fs.Arg(0), fs.Arg(1), a.alpha)
	}
	if fs.NArg() > 0 {
		return usageErr("bench", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if spec.Reps < 1 {
		return usageErr("bench", fmt.Errorf("-r: %d repetitions (minimum 1)", spec.Reps))
	}
	export, ok := report.LlamaBenchFormats[a.out]
	if !ok {
		return usageErr("bench", fmt.Errorf("-o: %q is not one of %s", a.out, strings.Join(report.LlamaBenchFormatNames(), ", ")))
	}
	if a.lb.outErr != "" && a.lb.outErr != "none" {
		second, ok := report.LlamaBenchFormats[a.lb.outErr]
		if !ok {
			return usageErr("bench", fmt.Errorf("-oe: %q is not one of %s, none", a.lb.outErr, strings.Join(report.LlamaBenchFormatNames(), ", ")))
		}
		export = report.LlamaBenchTee(export, second, os.Stderr)
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
	limits, err := a.tf.limits()
	if err != nil {
		return usageErr("bench", err)
	}
	bo := jobs.BenchOptions{Verbose: a.lb.verbose}
	if a.lb.progress {
		bo.Steps = func(line string) { fmt.Fprintln(os.Stderr, line) }
	}
	if a.ceiling {
		if bo.CeilingBytes, err = workloads.ParseBytes(a.bwSize); err != nil {
			return usageErr("bench", fmt.Errorf("--bw-size: %w", err))
		}
		bo.CeilingProbes = a.bwProbes
	}
	job := workloads.Job{Bench: &spec, Device: a.tf.device, PowerLimitW: limits}
	return headless(ctx, "bench", job, a.tf, a.of, func(o *jobs.Options) { o.Bench, o.CacheDir = bo, a.cacheDir }, terminalProgress(), export)
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
