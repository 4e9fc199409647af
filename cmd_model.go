package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
)

func runModel(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("model: want a subcommand: info FILE | synth --shape S --type T -o FILE | quantize IN OUT TYPE | split --parts N IN")
	}
	switch args[0] {
	case "info":
		return runModelInfo(args[1:])
	case "synth":
		return runModelSynth(ctx, args[1:])
	case "quantize":
		return runModelQuantize(ctx, args[1:])
	case "split":
		return runModelSplit(args[1:])
	}
	return fmt.Errorf("model: unknown subcommand %q (want info, synth, quantize or split)", args[0])
}

func runModelInfo(args []string) error {
	fs := newFlags("model info", "[--tensors] [--kv] FILE | synth:SHAPE:TYPE", nil)
	tensors := fs.Bool("tensors", false, "list every tensor")
	kv := fs.Bool("kv", false, "list every metadata key")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	return jobs.ModelInfo(os.Stdout, fs.Arg(0), *tensors, *kv)
}

func runModelSynth(ctx context.Context, args []string) error {
	fs := newFlags("model synth", "--shape S --type T [-o FILE] [--seed N] [--cache-dir DIR] | --list", nil)
	shape := fs.String("shape", "", "model shape: "+strings.Join(synth.Shapes(), ", "))
	typ := fs.String("type", "Q4_0", "quantization mix: "+strings.Join(synth.FileTypes(), ", "))
	out := fs.String("o", "", "output `file` (default: the synthetic-model cache, reused when present)")
	seed := fs.Uint64("seed", synth.DefaultSeed, "weight seed")
	cacheDir := fs.String("cache-dir", "", "synthetic-model cache `dir` (default: the user cache dir)/llmbench/synth")
	list := fs.Bool("list", false, "list the shapes with their parameter counts")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *list {
		for _, name := range synth.Shapes() {
			spec, err := synth.NewSpec(name, "Q4_0", *seed)
			if err != nil {
				return err
			}
			fmt.Printf("%-18s %s parameters\n", name, report.HumanCount(uint64(spec.Params())))
		}
		return nil
	}
	if *shape == "" {
		fs.Usage()
		return errUsage
	}
	spec, err := synth.NewSpec(*shape, *typ, *seed)
	if err != nil {
		return err
	}
	p := newProgress(os.Stderr, "writing "+spec.String())
	path := *out
	if path == "" {
		path, err = synth.Ensure(ctx, *cacheDir, *shape, *typ, *seed, p.update)
	} else {
		err = synth.Cache{}.WriteFile(ctx, path, spec, p.update)
	}
	p.done()
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}

// runModelQuantize converts an F32/F16/BF16 GGUF model to a quantization mix with
// llama-quantize's per-tensor rules (llama-quantize's argument order: IN OUT TYPE).
func runModelQuantize(ctx context.Context, args []string) error {
	fs := newFlags("model quantize", "IN.gguf OUT.gguf TYPE", []string{
		"llmbench model synth --shape llama-1b --type BF16 -o bf16.gguf",
		"llmbench model quantize bf16.gguf q8.gguf Q8_0",
	})
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 3 {
		fs.Usage()
		return errUsage
	}
	in, out, typ := fs.Arg(0), fs.Arg(1), fs.Arg(2)
	p := newProgress(os.Stderr, "quantizing "+in+" to "+strings.ToUpper(typ))
	err := synth.QuantizeFile(ctx, in, out, typ, p.update)
	p.done()
	if err != nil {
		return err
	}
	fmt.Println(out)
	return nil
}

// runModelSplit writes a model in several files as llama.cpp's gguf-split does
// (PREFIX-00001-of-0000N.gguf, …); llmbench and llama.cpp load them from the first.
func runModelSplit(args []string) error {
	fs := newFlags("model split", "[--parts N] [-o PREFIX] IN.gguf", []string{
		"llmbench model split --parts 3 -o /tmp/m model.gguf   # /tmp/m-00001-of-00003.gguf …",
	})
	parts := fs.Int("parts", 2, "number of files (whole tensors in each, as evenly as they fall)")
	out := fs.String("o", "", "output `prefix` (default: IN without .gguf)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	in := fs.Arg(0)
	prefix := *out
	if prefix == "" {
		prefix = strings.TrimSuffix(in, filepath.Ext(in))
	}
	f, err := gguf.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	paths, err := gguf.WriteSplit(f, prefix, *parts)
	if err != nil {
		return err
	}
	fmt.Println(strings.Join(paths, "\n"))
	return nil
}

// progress prints a byte-count progress line on w: redrawn in place on a terminal, a
// line every few seconds otherwise.
type progress struct {
	w             *os.File
	label         string
	tty           bool
	start, last   time.Time
	printed       bool
	doneB, totalB int64
}

func newProgress(w *os.File, label string) *progress {
	st, err := w.Stat()
	tty := err == nil && st.Mode()&os.ModeCharDevice != 0
	return &progress{w: w, label: label, tty: tty, start: time.Now()}
}

func (p *progress) update(done, total int64) {
	p.doneB, p.totalB = done, total
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if now.Sub(p.last) < every && done < total {
		return
	}
	p.last = now
	p.print("\r")
}

func (p *progress) print(prefix string) {
	el := time.Since(p.start).Seconds()
	pct := 100 * float64(p.doneB) / float64(max(p.totalB, 1))
	line := fmt.Sprintf("%s: %s / %s  %5.1f %%  %.1f s  %s/s", p.label, report.BytesIEC(uint64(p.doneB)), report.BytesIEC(uint64(p.totalB)),
		pct, el, report.BytesIEC(uint64(float64(p.doneB)/max(el, 1e-9))))
	if p.tty {
		fmt.Fprintf(p.w, "%s%s\x1b[K", prefix, line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

func (p *progress) done() {
	if p.tty && p.printed {
		fmt.Fprintln(p.w)
	}
}
