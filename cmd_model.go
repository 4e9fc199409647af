package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"llmbench/engine/gguf"
	"llmbench/engine/model"
	"llmbench/engine/synth"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
)

func runModel(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("model: want a subcommand: info FILE | synth --shape S --type T -o FILE")
	}
	switch args[0] {
	case "info":
		return runModelInfo(args[1:])
	case "synth":
		return runModelSynth(ctx, args[1:])
	}
	return fmt.Errorf("model: unknown subcommand %q (want info or synth)", args[0])
}

func runModelInfo(args []string) error {
	fs := newFlags("model info", "[--tensors] [--kv] FILE", nil)
	tensors := fs.Bool("tensors", false, "list every tensor")
	kv := fs.Bool("kv", false, "list every metadata key")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	f, err := gguf.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	return modelInfo(os.Stdout, fs.Arg(0), f, *tensors, *kv)
}

// modelInfo prints the facts llama.cpp prints when it loads a model.
func modelInfo(w io.Writer, path string, f *gguf.File, tensors, kv bool) error {
	var params, weightBytes uint64
	mix := map[kernels.DType]int{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		params += t.Elements()
		weightBytes += t.Size
		mix[t.Type]++
	}
	row := func(k, format string, a ...any) { fmt.Fprintf(w, "%-14s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("file", "%s (%s)", path, bytesIEC(f.FileSize))
	row("format", "GGUF v%d, %d tensors, %d metadata keys, alignment %d", f.Version, len(f.Tensors), len(f.KV), f.Alignment)
	row("architecture", "%s", orNone(f.Architecture()))
	if name, ok := f.String("general.name"); ok {
		row("name", "%s", name)
	}
	if ft, ok := f.Uint("general.file_type"); ok {
		row("file type", "%s", synth.FileTypeName(uint32(ft)))
	}
	row("type mix", "%s", typeMix(mix))
	bpw := 0.0
	if params > 0 {
		bpw = float64(weightBytes) * 8 / float64(params)
	}
	row("parameters", "%s (%s)", commas(params), humanCount(params))
	row("size", "%s of weights, %.2f bits per weight", bytesIEC(weightBytes), bpw)
	m, merr := model.FromGGUF(f)
	if merr == nil {
		row("context", "%d", m.Context)
		row("embedding", "%d", m.Embd)
		row("layers", "%d", m.Layers)
		row("heads", "%d (key/value heads %d, head size %d, GQA %d)", m.Heads, m.KVHeads, m.HeadDim, m.Heads/m.KVHeads)
		row("feed-forward", "%d", m.FF)
		style := "normal"
		if m.Rope.NeoX {
			style = "neox"
		}
		row("rope", "%s, %d dims, base %g, scale %g", style, m.Rope.Dims, m.Rope.Base, m.Rope.FreqScale)
		row("rms epsilon", "%g", m.NormEps)
		out := "separate output.weight"
		if m.TiedOutput {
			out = "tied to token_embd"
		}
		row("output", "%s", out)
	} else {
		row("model", "cannot run: %v", merr)
	}
	if tok, err := tokenizer.FromGGUF(f); err == nil {
		pre := ""
		if tok.Pre() != "" {
			pre = ", pre " + tok.Pre()
		}
		row("vocabulary", "%d tokens (%s%s)", tok.VocabSize(), tok.Model(), pre)
		row("special", "bos %s, eos %s, add bos %v", tokName(tok, tok.BOS()), tokName(tok, tok.EOS()), tok.AddBOS())
	} else if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok {
		row("vocabulary", "%d tokens (tokenizer unsupported: %v)", len(toks), err)
	} else {
		row("vocabulary", "none")
	}
	if kv {
		fmt.Fprintln(w, "\nmetadata:")
		for _, p := range f.KV {
			fmt.Fprintf(w, "  %-44s %-4s %s\n", p.Key, p.Value.Type, gguf.FormatValue(p.Value))
		}
	}
	if tensors {
		fmt.Fprintln(w, "\ntensors:")
		for i := range f.Tensors {
			t := &f.Tensors[i]
			fmt.Fprintf(w, "  %-32s %-5s %-22s %10s\n", t.Name, t.Type, fmt.Sprint(t.Shape), bytesIEC(t.Size))
		}
	}
	return nil
}

func tokName(t *tokenizer.Tokenizer, id int32) string {
	if id < 0 || int(id) >= t.VocabSize() {
		return "none"
	}
	return fmt.Sprintf("%d %q", id, t.Token(id))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func typeMix(m map[kernels.DType]int) string {
	type kv struct {
		t kernels.DType
		n int
	}
	var s []kv
	for t, n := range m {
		s = append(s, kv{t, n})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].n > s[j].n || s[i].n == s[j].n && s[i].t < s[j].t })
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprintf("%s ×%d", x.t, x.n)
	}
	return strings.Join(parts, ", ")
}

// commas formats n with thousands separators.
func commas(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// humanCount formats a count with K/M/B suffixes, as llama.cpp prints parameters.
func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2f K", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// bytesIEC formats a byte count in KiB/MiB/GiB.
func bytesIEC(n uint64) string {
	const k = 1024
	switch {
	case n >= k*k*k:
		return fmt.Sprintf("%.2f GiB", float64(n)/(k*k*k))
	case n >= k*k:
		return fmt.Sprintf("%.2f MiB", float64(n)/(k*k))
	case n >= k:
		return fmt.Sprintf("%.2f KiB", float64(n)/k)
	}
	return fmt.Sprintf("%d B", n)
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
			fmt.Printf("%-18s %s parameters\n", name, humanCount(uint64(spec.Params())))
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
	line := fmt.Sprintf("%s: %s / %s  %5.1f %%  %.1f s  %s/s", p.label, bytesIEC(uint64(p.doneB)), bytesIEC(uint64(p.totalB)),
		pct, el, bytesIEC(uint64(float64(p.doneB)/max(el, 1e-9))))
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
