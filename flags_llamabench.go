package main

// llama-bench's flags beyond the core test parameters of flags_bench.go: CPU
// placement (acting on the engine), GPU and device settings (recorded, no effect on
// the CPU engine), output and the flags that cannot apply. The pinned llama-bench
// version and every flag's status are in docs/COMPATIBILITY.md.

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"llmbench/workloads"
)

// llamaBenchFlags are the llama-bench flags defineLlamaBench adds.
type llamaBenchFlags struct {
	outErr                  string
	listDevices             bool
	verbose, progress       bool
	hfRepo, hfFile, hfToken []string
	offline                 bool
	rpc                     []string
	loadModes               []string
	dio                     []int
	faGiven, ctvGiven       bool
}

// gpuOnlyFlags are llama-bench's flags that are recorded but have no effect on the CPU
// engine (one note says so when any is given).
var gpuOnlyFlags = []string{"ngl", "n-gpu-layers", "ncmoe", "n-cpu-moe", "sm", "split-mode", "mg", "main-gpu", "nkvo", "no-kv-offload",
	"dev", "ts", "tensor-split", "ot", "override-tensor", "nopo", "no-op-offload", "no-host", "fitt", "fit-target", "fitc", "fit-ctx",
	"rpc", "embd", "embeddings"}

// llamaBenchGroupNames are the flags defineLlamaBench adds, for the help's groups.
var llamaBenchGroupNames = []string{"C", "cpu-mask", "cpu-strict", "poll", "prio", "numa", "mmp", "mmap", "lm", "load-mode", "dio", "direct-io",
	"oe", "output-err", "v", "verbose", "progress", "list-devices", "hf", "hfr", "hf-repo", "hff", "hf-file", "hft", "hf-token", "offline"}

// defineLlamaBench defines llama-bench's remaining flags on fs, filling spec.
func defineLlamaBench(fs *flag.FlagSet, spec *workloads.BenchSpec) *llamaBenchFlags {
	l := &llamaBenchFlags{}
	c, g := &spec.LlamaBenchCPU, &spec.LlamaBenchGPU
	names := func(f func(name, usage string), usage string, ns ...string) {
		for i, n := range ns {
			u := usage
			if i > 0 {
				u = "same as -" + ns[0]
			}
			f(n, u)
		}
	}
	strs := func(v *[]string, usage string, ns ...string) {
		names(func(n, u string) { fs.Var(benchStrings{v}, n, u) }, usage, ns...)
	}
	bools := func(v *[]int, usage string, ns ...string) {
		names(func(n, u string) { fs.Var(benchBools{v}, n, u) }, usage, ns...)
	}
	ints := func(v *[]int, usage string, ns ...string) {
		names(func(n, u string) { fs.Var(benchInts{v}, n, u) }, usage, ns...)
	}
	const noEffect = " (recorded; no effect on the CPU engine)"
	// CPU placement: acts on the engine.
	strs(&c.CPUMask, "hex CPU `mask`s the engine's threads run on (sched_setaffinity; 0x0 = all)", "C", "cpu-mask")
	fs.Var(benchBools{&c.CPUStrict}, "cpu-strict", "`0|1`: recorded; Go schedules the worker goroutines over the masked CPUs as a set, it cannot bind each to one")
	ints(&c.Poll, "`0..100`: how long idle worker threads busy-wait for work before they sleep (default 50)", "poll")
	fs.Var(benchPrio{&c.Prio}, "prio", "process priority `-1|0|1|2|3` (nice 5, 0, -5, -10, -20; above 0 needs CAP_SYS_NICE)")
	fs.StringVar(&c.NUMA, "numa", "", "`distribute|isolate|numactl`: all online CPUs, the CPUs of the current node, or the CPU set numactl gave")
	bools(&c.UseMmap, "`0|1`: map the model file (1) or read it into memory (0)", "mmp", "mmap")
	strs(&l.loadModes, "`mode`s: none (read into memory) or mmap; mlock, mmap+mlock and dio are refused", "lm", "load-mode")
	bools(&l.dio, "`0|1`: direct I/O (0 = -lm none; 1 is refused)", "dio", "direct-io")
	// GPU and device settings: recorded only.
	names(func(n, u string) { fs.Var(benchSignedInts{&g.NGPULayers}, n, u) }, "GPU `layers`"+noEffect, "ngl", "n-gpu-layers")
	ints(&g.NCPUMoE, "MoE layers kept on the CPU"+noEffect, "ncmoe", "n-cpu-moe")
	strs(&g.SplitMode, "`none|layer|row|tensor`"+noEffect, "sm", "split-mode")
	ints(&g.MainGPU, "main GPU `index`"+noEffect, "mg", "main-gpu")
	bools(&g.NoKVOffload, "`0|1`"+noEffect, "nkvo", "no-kv-offload")
	fs.Var(benchStrings{&g.Devices}, "dev", "`dev0/dev1/…` (auto, none)"+noEffect+"; the long spelling --device is llmbench's telemetry flag")
	names(func(n, u string) { fs.Var(benchSplits{&g.TensorSplit}, n, u) }, "`ts0/ts1/…`"+noEffect, "ts", "tensor-split")
	names(func(n, u string) { fs.Var(benchOverrides{&g.Overrides}, n, u) }, "`pattern=buffer;…`"+noEffect, "ot", "override-tensor")
	bools(&g.Embeddings, "`0|1`"+noEffect+": the benchmark computes logits either way", "embd", "embeddings")
	bools(&g.NoOpOffload, "`0|1`"+noEffect, "nopo", "no-op-offload")
	fs.Var(benchBools{&g.NoHost}, "no-host", "`0|1`"+noEffect)
	ints(&g.FitTarget, "`MiB` margin to fit the model to GPU memory"+noEffect, "fitt", "fit-target")
	ints(&g.FitMinCtx, "minimum context for --fit-target"+noEffect, "fitc", "fit-ctx")
	strs(&l.rpc, "RPC `servers`"+noEffect+" (llmbench has no RPC backend)", "rpc")
	// Output and run control.
	names(func(n, u string) { fs.StringVar(&l.outErr, n, "", u) }, "also print the results on stderr in this `format` (csv, json, jsonl, md, sql, none)", "oe", "output-err")
	names(func(n, u string) { fs.BoolVar(&l.verbose, n, false, u) }, "verbose: log each test's engine details (backend kernels, load mode, KV cache, peak RSS, CPUs)", "v", "verbose")
	fs.BoolVar(&l.progress, "progress", false, "print llama-bench's progress lines on stderr")
	fs.BoolVar(&l.listDevices, "list-devices", false, "list the devices the engine computes on and exit")
	// Downloads: refused (llmbench reads local files only).
	strs(&l.hfRepo, "Hugging Face `repo`: refused, llmbench does not download models", "hf", "hfr", "hf-repo")
	strs(&l.hfFile, "Hugging Face `file` (with -hf)", "hff", "hf-file")
	strs(&l.hfToken, "Hugging Face `token`: accepted, unused (nothing is downloaded)", "hft", "hf-token")
	fs.BoolVar(&l.offline, "offline", false, "accepted: llmbench never goes to the network")
	return l
}

// finish applies what only the whole command line decides: llama-bench's defaults of
// -fa (auto) and -ctv (f16), -lm/-dio into -mmp, and the refusals. set holds the
// flags given.
func (l *llamaBenchFlags) finish(spec *workloads.BenchSpec, set map[string]bool) (notes []string, err error) {
	if len(l.hfRepo) > 0 {
		return nil, errors.New("-hf: llmbench does not download models; give the GGUF file with -m (`llmbench model` lists the ones on this machine)")
	}
	if len(l.hfFile) > 0 {
		return nil, errors.New("-hff: only with -hf, which llmbench refuses (it does not download models)")
	}
	if !set["fa"] && !set["flash-attn"] {
		spec.FlashAttn = []int{workloads.FlashAttnAuto}
	}
	if !set["ctv"] && !set["cache-type-v"] {
		spec.TypeV = []string{workloads.DefaultBenchKV}
	}
	for _, m := range l.loadModes {
		switch m {
		case "none":
			spec.UseMmap = append(spec.UseMmap, 0)
		case "mmap":
			spec.UseMmap = append(spec.UseMmap, 1)
		case "mlock", "mmap+mlock", "dio":
			return nil, fmt.Errorf("-lm %s: the engine loads none (read into memory) or mmap", m)
		default:
			return nil, fmt.Errorf("-lm %q is not none, mmap, mlock, mmap+mlock or dio", m)
		}
	}
	for _, d := range l.dio {
		if d == 1 {
			return nil, errors.New("-dio 1: the engine reads weights through the page cache (load modes: none, mmap)")
		}
		spec.UseMmap = append(spec.UseMmap, 0)
	}
	for _, m := range spec.SplitMode {
		if m != "none" && m != "layer" && m != "row" && m != "tensor" {
			return nil, fmt.Errorf("-sm %q is not none, layer, row or tensor", m)
		}
	}
	var given []string
	for _, n := range gpuOnlyFlags {
		if set[n] {
			given = append(given, "-"+n)
		}
	}
	if len(given) > 0 {
		notes = append(notes, fmt.Sprintf("note: %s recorded in the results; no effect on the CPU engine", strings.Join(given, ", ")))
	}
	if set["cpu-strict"] {
		notes = append(notes, "note: --cpu-strict recorded; Go runs the engine's worker goroutines on the masked CPUs as a set and cannot bind each to one CPU")
	}
	return notes, nil
}

// benchBools is a repeatable list of llama-bench booleans (0/1, true/false).
type benchBools struct{ v *[]int }

func (f benchBools) String() string { return benchInts(f).String() }

func (f benchBools) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "0", "false":
			*f.v = append(*f.v, 0)
		case "1", "true":
			*f.v = append(*f.v, 1)
		default:
			return fmt.Errorf("%q is not 0 or 1", x)
		}
	}
	return nil
}

// benchSignedInts is a list flag whose items may be negative (-ngl -1), else
// llama-bench's ranges.
type benchSignedInts struct{ v *[]int }

func (f benchSignedInts) String() string { return benchInts(f).String() }

func (f benchSignedInts) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		x = strings.TrimSpace(x)
		if strings.HasPrefix(x, "-") {
			n, err := strconv.Atoi(x)
			if err != nil {
				return fmt.Errorf("%q is not an integer", x)
			}
			*f.v = append(*f.v, n)
			continue
		}
		if err := (benchInts(f)).Set(x); err != nil {
			return err
		}
	}
	return nil
}

// benchSplits is -ts: each comma item "a/b/…" (or ';'), recorded as llama-bench
// prints it: every share with two decimals, up to the last non-zero one.
type benchSplits struct{ v *[]string }

func (f benchSplits) String() string { return benchStrings(f).String() }

func (f benchSplits) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		parts := strings.FieldsFunc(item, func(r rune) bool { return r == '/' || r == ';' })
		var vals []float64
		last := 0
		for _, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return fmt.Errorf("%q is not a list of numbers split by /", item)
			}
			if v > 0 {
				last = len(vals)
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			vals = []float64{0}
		}
		out := make([]string, last+1)
		for i := range out {
			out[i] = strconv.FormatFloat(vals[i], 'f', 2, 64)
		}
		*f.v = append(*f.v, strings.Join(out, "/"))
	}
	return nil
}

// benchOverrides is -ot: comma-separated groups of "pattern=buffer" pairs joined by
// ';', recorded as given ("none" for an empty group).
type benchOverrides struct{ v *[]string }

func (f benchOverrides) String() string { return benchStrings(f).String() }

func (f benchOverrides) Set(s string) error {
	for _, group := range strings.Split(s, ",") {
		if group == "" {
			*f.v = append(*f.v, workloads.DefaultOverrides)
			continue
		}
		for _, o := range strings.Split(group, ";") {
			if name, buf, ok := strings.Cut(o, "="); !ok || name == "" || buf == "" {
				return fmt.Errorf("%q is not PATTERN=BUFFER_TYPE", o)
			}
		}
		*f.v = append(*f.v, group)
	}
	return nil
}

// benchPrio is --prio.
type benchPrio struct{ v *int }

func (f benchPrio) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.Itoa(*f.v)
}

func (f benchPrio) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 || n > 3 {
		return fmt.Errorf("%q is not one of -1, 0, 1, 2, 3", s)
	}
	*f.v = n
	return nil
}

// llamaBenchArgs rewrites llama-bench spellings Go's flag package reads otherwise:
// "--n_prompt" (llama-bench turns '_' into '-' in long names) and negative values
// after a flag ("-ngl -1", "--prio -1"), which must be joined with '='.
func llamaBenchArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a, "=")
			a = strings.ReplaceAll(name, "_", "-")
			if hasVal {
				a += "=" + val
			}
		}
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && i+1 < len(args) && isNegativeNumber(args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func isNegativeNumber(s string) bool {
	if !strings.HasPrefix(s, "-") {
		return false
	}
	_, err := strconv.ParseFloat(strings.Split(s, ",")[0], 64)
	return err == nil
}
