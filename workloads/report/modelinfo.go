package report

import (
	"fmt"
	"io"
	"llmbench/engine/gguf"
	"llmbench/engine/model"
	"llmbench/engine/synth"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
	"sort"
	"strings"
)

// ModelInfo prints the facts llama.cpp prints when it loads a model.
func ModelInfo(w io.Writer, path string, f *gguf.File, tensors, kv bool) error {
	var params, weightBytes uint64
	mix := map[kernels.DType]int{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		params += t.Elements()
		weightBytes += t.Size
		mix[t.Type]++
	}
	row := func(k, format string, a ...any) { fmt.Fprintf(w, "%-14s %s\n", k+":", fmt.Sprintf(format, a...)) }
	if n := f.SplitCount(); n > 1 {
		row("file", "%s (%s in %d parts)", path, BytesIEC(f.TotalSize()), n)
	} else {
		row("file", "%s (%s)", path, BytesIEC(f.FileSize))
	}
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
	row("parameters", "%s (%s)", commas(params), HumanCount(params))
	row("size", "%s of weights, %.2f bits per weight", BytesIEC(weightBytes), bpw)
	m, merr := model.FromGGUF(f)
	if merr == nil {
		row("context", "%d", m.Context)
		row("embedding", "%d", m.Embd)
		row("layers", "%d", m.Layers)
		row("heads", "%d (key/value heads %d, head size %d, GQA %d)", m.Heads, m.KVHeads, m.HeadDim, m.Heads/m.KVHeads)
		row("feed-forward", "%d", m.FF)
		if m.Experts > 0 {
			row("experts", "%d, %d per token, feed-forward %d each (%s parameters active per token)",
				m.Experts, m.ExpertsUsed, m.ExpertFF, HumanCount(activeParams(f, params, m.Experts, m.ExpertsUsed)))
		}
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
			fmt.Fprintf(w, "  %-32s %-5s %-22s %10s\n", t.Name, t.Type, fmt.Sprint(t.Shape), BytesIEC(t.Size))
		}
	}
	return nil
}

// tokName names a special token of t ("none" when unset).
func tokName(t *tokenizer.Tokenizer, id int32) string {
	if id < 0 || int(id) >= t.VocabSize() {
		return "none"
	}
	return fmt.Sprintf("%d %q", id, t.Token(id))
}

// orNone is s, or "(none)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// typeMix lists the tensor types by count ("Q4_0 ×20, F32 ×5").
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

// HumanCount formats a count with K/M/B suffixes, as llama.cpp prints parameters.
func HumanCount(n uint64) string {
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

// BytesIEC formats a byte count in KiB/MiB/GiB.
func BytesIEC(n uint64) string {
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

// activeParams returns the parameters one token uses in a model of the given experts:
// params less the experts it is not routed to in each 3-D expert tensor.
func activeParams(f *gguf.File, params uint64, experts, used int) uint64 {
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Shape) == 3 && t.Shape[2] == uint64(experts) {
			params -= t.Elements() / uint64(experts) * uint64(experts-used)
		}
	}
	return params
}
