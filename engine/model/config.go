// Package model holds the transformer architectures llmbench runs, registered by the
// GGUF general.architecture name, as pure graph code over kernels.Backend.
package model

import (
	"fmt"
	"sort"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// Config is the shape of a decoder-only transformer, read from GGUF metadata.
type Config struct {
	Arch       string
	Name       string
	Vocab      int
	Embd       int
	Layers     int
	Heads      int
	KVHeads    int
	HeadDim    int
	FF         int
	Context    int // trained context length
	NormEps    float32
	Rope       kernels.RoPE
	QKVBias    bool // qwen2: biases on the q, k and v projections
	QKNorm     bool // qwen3: RMSNorm of each query and key head before RoPE
	TiedOutput bool // no output.weight: logits reuse token_embd
	// SlidingWindow is the attention window of every layer from the metadata
	// (ARCH.attention.sliding_window, Mistral's): each position attends over the last
	// SlidingWindow positions; 0 = full causal attention.
	SlidingWindow int
	// Experts is the number of routed experts of each block's feed-forward network
	// (qwen3moe's expert_count; 0: a dense FFN), ExpertsUsed how many of them each
	// token takes (expert_used_count) and ExpertFF each expert's intermediate size
	// (expert_feed_forward_length).
	Experts, ExpertsUsed, ExpertFF int
}

// Architecture builds a model of one family from a parsed GGUF file.
type Architecture func(f *gguf.File) (*Model, error)

var archs = map[string]Architecture{}

// Register makes an architecture loadable under its general.architecture name.
func Register(name string, a Architecture) { archs[name] = a }

// Architectures lists the supported architecture names.
func Architectures() []string {
	var s []string
	for k := range archs {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// FromGGUF builds the model a GGUF file describes; its tensors stay in the file's
// memory map, so f must stay open while the model is used.
func FromGGUF(f *gguf.File) (*Model, error) {
	arch := f.Architecture()
	a, ok := archs[arch]
	if !ok {
		if arch == "" {
			return nil, fmt.Errorf("model: general.architecture is missing")
		}
		return nil, fmt.Errorf("model: architecture %q is not supported (supported: %v)", arch, Architectures())
	}
	return a(f)
}

// meta reads <arch>.<key> metadata with defaults and collects the first error.
type meta struct {
	f    *gguf.File
	arch string
	err  error
}

func (m *meta) uint(key string, def int, required bool) int {
	v, ok := m.f.Uint(m.arch + "." + key)
	if !ok {
		if required && m.err == nil {
			m.err = fmt.Errorf("model: metadata key %s.%s is missing", m.arch, key)
		}
		return def
	}
	if v > 1<<31 {
		if m.err == nil {
			m.err = fmt.Errorf("model: %s.%s = %d is out of range", m.arch, key, v)
		}
		return def
	}
	return int(v)
}

func (m *meta) float(key string, def float64) float64 {
	if v, ok := m.f.Float(m.arch + "." + key); ok {
		return v
	}
	return def
}

// readConfig reads the hyperparameters every llama-like architecture shares.
func readConfig(f *gguf.File) (Config, error) {
	m := &meta{f: f, arch: f.Architecture()}
	c := Config{Arch: m.arch}
	c.Name, _ = f.String("general.name")
	c.Embd = m.uint("embedding_length", 0, true)
	c.Layers = m.uint("block_count", 0, true)
	c.FF = m.uint("feed_forward_length", 0, true)
	c.Heads = m.uint("attention.head_count", 0, true)
	c.KVHeads = m.uint("attention.head_count_kv", c.Heads, false)
	c.Context = m.uint("context_length", 2048, false)
	c.NormEps = float32(m.float("attention.layer_norm_rms_epsilon", 1e-5))
	c.SlidingWindow = m.uint("attention.sliding_window", 0, false)
	if m.err != nil {
		return c, m.err
	}
	if c.Heads == 0 || c.KVHeads == 0 || c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("model: %d heads cannot share %d key/value heads", c.Heads, c.KVHeads)
	}
	c.HeadDim = m.uint("attention.key_length", c.Embd/c.Heads, false)
	if v := m.uint("attention.value_length", c.HeadDim, false); v != c.HeadDim {
		return c, fmt.Errorf("model: key length %d differs from value length %d (unsupported)", c.HeadDim, v)
	}
	c.Rope = kernels.RoPE{
		Dims:      m.uint("rope.dimension_count", c.HeadDim, false),
		Base:      float32(m.float("rope.freq_base", 10000)),
		FreqScale: 1,
	}
	if s, _ := f.String(m.arch + ".rope.scaling.type"); s == "linear" {
		if factor := m.float("rope.scaling.factor", 1); factor > 0 {
			c.Rope.FreqScale = float32(1 / factor)
		}
	}
	if c.Rope.Dims <= 0 || c.Rope.Dims > c.HeadDim || c.Rope.Dims%2 != 0 {
		return c, fmt.Errorf("model: rope dimension %d does not fit head size %d", c.Rope.Dims, c.HeadDim)
	}
	if c.Experts = m.uint("expert_count", 0, false); c.Experts > 0 {
		c.ExpertsUsed = m.uint("expert_used_count", 0, true)
		c.ExpertFF = m.uint("expert_feed_forward_length", 0, true)
		if m.err != nil {
			return c, m.err
		}
		if c.ExpertsUsed <= 0 || c.ExpertsUsed > c.Experts || c.ExpertFF <= 0 {
			return c, fmt.Errorf("model: %d of %d experts of %d each per token (need 1…%d, and a positive size)", c.ExpertsUsed, c.Experts, c.ExpertFF, c.Experts)
		}
	}
	if c.Embd <= 0 || c.Layers <= 0 || c.FF <= 0 || c.HeadDim <= 0 {
		return c, fmt.Errorf("model: bad shape (embedding %d, layers %d, ffn %d)", c.Embd, c.Layers, c.FF)
	}
	return c, m.err
}
