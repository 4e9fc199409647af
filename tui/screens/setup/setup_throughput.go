package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/discover"
)

// The throughput workload's rows (JetStream's flags; the model panel, kv cache and
// threads rows are shared with the other workloads).
const (
	rowWeights    = "weight types"
	rowTBatch     = "batch size"
	rowCacheLen   = "cache length"
	rowMaxIn      = "max input"
	rowMaxOut     = "max output"
	rowNumPrompts = "num prompts"
	rowShareGPT   = "dataset path"
)

// throughputSource is the type a synthetic shape is written in for a throughput run
// (its other weights types are quantized from that file, as `llmbench throughput`).
const throughputSource = "BF16"

// builtinWeights is the built-in model's weights type (a throughput row's name).
const builtinWeights = "F32"

var throughputRows = []string{rowKind, rowWeights, rowKV, rowTBatch, rowCacheLen, rowMaxIn, rowMaxOut, rowNumPrompts, rowShareGPT, rowThreads}

// throughputDefaults are the throughput rows' first values: `llmbench throughput`'s
// defaults (no dataset file: the CLI asks for one too).
var throughputDefaults = map[string]string{
	rowWeights: "", rowTBatch: "16", rowCacheLen: "1024", rowMaxIn: "1024", rowMaxOut: "1024", rowNumPrompts: "64", rowShareGPT: "",
}

var throughputHints = map[string]string{
	rowWeights:    "one row each: BF16,Q8_0 (empty: BF16, a file's own)",
	rowKV:         "q8_0 with Q8_0 weights, f16 otherwise",
	rowTBatch:     "max running sequences",
	rowCacheLen:   "KV positions per sequence",
	rowMaxIn:      "prompt tokens (longer ones cut)",
	rowMaxOut:     "tokens decoded per request",
	rowNumPrompts: "requests, all sent at once",
	rowShareGPT:   "a sharegpt JSON file",
}

// ThroughputSpec returns the JetStream-style spec of a Throughput config.
func (c Config) ThroughputSpec() workloads.ThroughputSpec {
	t := workloads.ThroughputSpec{Model: c.Model.Path, WeightsTypes: slices.Clone(c.WeightsTypes), BatchSize: c.BatchSize,
		MaxCacheLength: c.MaxCacheLength, MaxInputLength: c.MaxInputLength, MaxOutputLength: c.MaxOutputLength,
		NumPrompts: c.Prompts, DatasetPath: c.DatasetPath, Threads: c.Threads}
	if c.Model.Shape != "" {
		t.Model = c.Model.Shape
	}
	if c.KVType != "" {
		t.KVCacheTypes = []string{c.KVType}
	}
	return t
}

// ThroughputRowNames names a Throughput config's rows as JetStream's table does
// (ThroughputRowNames of its spec).
func (c Config) ThroughputRowNames() []string { return ThroughputRowNames(c.ThroughputSpec()) }

// ThroughputRowNames names the rows of a throughput spec as JetStream's table does
// ("bfloat16", "int8", "q4_0 / f16"), before the run: a row that keeps a file's own
// weights is "own / KV" (its type is known once the file is loaded).
func ThroughputRowNames(t workloads.ThroughputSpec) []string {
	own := "" // the weights of a row that keeps the model's
	switch _, shapeErr := synth.Lookup(t.Model); {
	case t.Model == "" || t.Model == workloads.BuiltinModel:
		own = builtinWeights
	case strings.HasPrefix(t.Model, "synth:"):
		own = t.Model[strings.LastIndex(t.Model, ":")+1:]
	case shapeErr == nil:
		own = throughputSource
	}
	var out []string
	for _, r := range t.Rows() {
		if r.Weights == "" && own == "" {
			out = append(out, "own / "+r.KV)
			continue
		}
		out = append(out, r.Dtype(strings.ToUpper(own)))
	}
	return out
}

// throughputModelName is the model and its rows' types: "llama-small BF16,Q8_0".
func (c Config) throughputModelName() string {
	name := filepath.Base(c.Model.Path)
	switch {
	case c.Model.Path == Builtin:
		name = builtin.Name
	case c.Model.Shape != "":
		name = c.Model.Shape
	}
	if len(c.WeightsTypes) > 0 {
		name += " " + strings.Join(c.WeightsTypes, ",")
	}
	return name
}

func (c Config) describeThroughput() string {
	return fmt.Sprintf("throughput · %s · batch %d · cache %d · in %d out %d · %d prompts", c.ModelName(), c.BatchSize,
		c.MaxCacheLength, c.MaxInputLength, c.MaxOutputLength, c.Prompts)
}

// throughputFieldErr says what is wrong with a throughput row (ok false: f is not one,
// or the workload is another).
func (m Model) throughputFieldErr(f string) (e string, ok bool) {
	if m.kind != Throughput {
		return "", false
	}
	v := m.text(f)
	switch f {
	case rowWeights:
		ws := splitList(v)
		for _, w := range ws {
			if _, err := synth.ParseFileType(w); err != nil {
				return err.Error(), true
			}
		}
		if len(ws) > 0 && m.chosen == rowBuiltin {
			return "the built-in model keeps its F32 weights: leave empty, or pick a synthetic shape or an F32/F16/BF16 file", true
		}
	case rowTBatch, rowCacheLen, rowMaxIn, rowMaxOut, rowNumPrompts:
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return "a whole number ≥ 1", true
		}
	case rowShareGPT:
		if v == "" {
			return "give a sharegpt JSON file: type or paste its path", true
		}
		if st, err := os.Stat(discover.ExpandPath(v)); err != nil || st.IsDir() {
			return "no such file", true
		}
	case rowKV:
		return m.kvHeadErr(), true
	default:
		return "", false
	}
	return "", true
}

// kvHeadErr says why a synthetic shape cannot hold a row's q8_0 KV cache (its head
// size is not a multiple of q8_0's block of 32, as the engine refuses it).
func (m Model) kvHeadErr() string {
	if m.chosen != rowShape {
		return ""
	}
	sh, err := synth.Lookup(m.shapes[m.shape])
	if err != nil {
		return ""
	}
	bs := kernels.Q8_0.BlockSize()
	hd := headDim(sh)
	if hd%bs == 0 {
		return ""
	}
	ws := splitList(strings.ToUpper(m.text(rowWeights)))
	t := workloads.ThroughputSpec{WeightsTypes: ws}
	if kv := kvTypes[m.kv]; kv != "" {
		t.KVCacheTypes = []string{kv}
	}
	for _, r := range t.Rows() {
		if r.KV == "q8_0" {
			return fmt.Sprintf("q8_0 needs a head size that is a multiple of %d (%s: %d): pick f16", bs, sh.Name, hd)
		}
	}
	return ""
}

func headDim(sh synth.Shape) int {
	if sh.HeadDim > 0 {
		return sh.HeadDim
	}
	return sh.Embd / sh.Heads
}

// throughputConfig fills c (the model panel and the shared rows read) from the
// throughput rows.
func (m Model) throughputConfig(c Config) (Config, error) {
	num := func(f string) int { n, _ := strconv.Atoi(m.text(f)); return n }
	out := Config{Kind: Throughput, Model: c.Model, Threads: c.Threads, KVType: c.KVType,
		WeightsTypes: splitList(strings.ToUpper(m.text(rowWeights))), BatchSize: num(rowTBatch), MaxCacheLength: num(rowCacheLen),
		MaxInputLength: num(rowMaxIn), MaxOutputLength: num(rowMaxOut), Prompts: num(rowNumPrompts),
		DatasetPath: discover.ExpandPath(m.text(rowShareGPT))}
	if out.Model.Shape != "" {
		out.Model.Type = throughputSource
	}
	if err := out.ThroughputSpec().Validate(); err != nil {
		return Config{}, err
	}
	return out, nil
}

// setThroughput shows a Throughput config's own rows.
func (m *Model) setThroughput(c Config) {
	m.setText(rowWeights, strings.Join(c.WeightsTypes, ","))
	m.setText(rowTBatch, strconv.Itoa(c.BatchSize))
	m.setText(rowCacheLen, strconv.Itoa(c.MaxCacheLength))
	m.setText(rowMaxIn, strconv.Itoa(c.MaxInputLength))
	m.setText(rowMaxOut, strconv.Itoa(c.MaxOutputLength))
	m.setText(rowNumPrompts, strconv.Itoa(c.Prompts))
	m.setText(rowShareGPT, c.DatasetPath)
}

// throughputEstimate is the estimate of a Throughput config: rows, requests and tokens,
// the memory each row needs (weights and the KV cache pool the engine sizes), and on a
// line of its own whether the rolling window will be used.
func (m Model) throughputEstimate(c Config) string {
	t := c.ThroughputSpec()
	names := c.ThroughputRowNames()
	tokens := int64(len(names)) * int64(t.NumPrompts) * int64(t.MaxOutputLength)
	s := fmt.Sprintf("Estimated: %s × %s, batch %d · %s tokens out", plural(len(names), "row"),
		plural(t.NumPrompts, "prompt"), t.BatchSize, humanCount(tokens))
	if c.Model.Shape == "" {
		s += m.memory(c)
	} else if sh, err := synth.Lookup(c.Model.Shape); err == nil {
		// as the throughput table's "weights + KV" column
		sep := " · weights + KV: "
		for i, r := range t.Rows() {
			if w, kv, ok := throughputMemory(t, sh, r); ok {
				s += fmt.Sprintf("%s%s %s", sep, names[i], mibSum(w, kv))
				sep = " · "
			}
		}
		if p, ok := m.synthPlan(); ok {
			s += " · " + c.Model.Shape + " " + throughputSource + ": " + p.Note
		}
	}
	// the window's reason and what it keeps wrap apart on a narrow screen
	return s + " · " + m.duration(c) + "\n" + strings.Replace(t.RollingWindowNote(), ", ", " · ", 1)
}

// mibSum says weights + KV = total ("208.9 + 297.0 = 505.9 MiB"), in MiB or GiB.
func mibSum(w, kv int64) string {
	unit, div := "MiB", float64(1<<20)
	if w+kv >= 1<<30 {
		unit, div = "GiB", 1<<30
	}
	return fmt.Sprintf("%.1f + %.1f = %.1f %s", float64(w)/div, float64(kv)/div, float64(w+kv)/div, unit)
}

// throughputMemory is what row r of t needs on shape sh: its weights (the tensors
// of the shape in the row's type) and the KV cache pool the engine sizes by default
// for BatchSize sequences of the cache length, or of their rings of blocks under a
// rolling window.
func throughputMemory(t workloads.ThroughputSpec, sh synth.Shape, r workloads.ThroughputRow) (weights, kv int64, ok bool) {
	wt := r.Weights
	if wt == "" {
		wt = throughputSource
	}
	spec, err := synth.NewSpec(sh.Name, wt, 0)
	if err != nil {
		return 0, 0, false
	}
	for _, ts := range spec.Tensors() {
		weights += ts.Bytes()
	}
	dt, err := kernels.ParseDType(r.KV)
	if err != nil {
		return 0, 0, false
	}
	perTok := 2 * int64(sh.Layers) * (int64(sh.HeadsKV*headDim(sh)) / int64(dt.BlockSize()) * int64(dt.BlockBytes())) // as model.KVBytesPerToken
	bs := engine.DefaultBlockSize
	perSeq := t.MaxCacheLength
	if t.RollingWindow() { // + 1: a prompt that was not cut starts with BOS
		perSeq = min(t.MaxInputLength+t.MaxOutputLength+1, engine.WindowBlocks(t.MaxCacheLength, bs)*bs)
	}
	blocks := int64(t.BatchSize) * int64(perSeq) / int64(bs)
	return weights, blocks * int64(bs) * perTok, true
}
