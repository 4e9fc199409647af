// Package model holds the transformer architectures llmbench runs, registered by the
// GGUF general.architecture name, as pure graph code over kernels.Backend.
package model

import (
	"fmt"
	"math"
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
	// LayerWindow is the window of the sliding-window layers of a model that alternates
	// them with full-attention layers (gpt-oss: attention.sliding_window on every even
	// block, as llama.cpp's swa pattern of 2); 0: none. Such a model's SlidingWindow is
	// 0, since its full layers need every position.
	LayerWindow int
	// AttnScale multiplies the attention scores; 0 means 1/√HeadDim. YaRN RoPE scaling
	// folds its magnitude correction in here (see yarn).
	AttnScale float32
}

// SlidingLayer reports whether block l attends over LayerWindow positions only.
func (c *Config) SlidingLayer(l int) bool { return c.LayerWindow > 0 && l%2 == 0 }

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
	scaling, _ := f.String(m.arch + ".rope.scaling.type")
	if scaling == "linear" {
		if factor := m.float("rope.scaling.factor", 1); factor > 0 {
			c.Rope.FreqScale = float32(1 / factor)
		}
	}
	if c.Rope.Dims <= 0 || c.Rope.Dims > c.HeadDim || c.Rope.Dims%2 != 0 {
		return c, fmt.Errorf("model: rope dimension %d does not fit head size %d", c.Rope.Dims, c.HeadDim)
	}
	if factor := m.float("rope.scaling.factor", 1); scaling == "yarn" && factor > 1 {
		orig := m.uint("rope.scaling.original_context_length", int(float64(c.Context)/factor), false)
		switch {
		case orig <= 0:
			return c, fmt.Errorf("model: YaRN scaling over an original context of %d positions", orig)
		case c.Rope.Dims != c.HeadDim:
			return c, fmt.Errorf("model: YaRN scaling over %d of %d head dimensions is not supported", c.Rope.Dims, c.HeadDim)
		}
		var mscale float64
		c.Rope.Factors, mscale = yarn(c.Rope.Dims, float64(c.Rope.Base), factor, orig,
			m.float("rope.scaling.yarn_beta_fast", 32), m.float("rope.scaling.yarn_beta_slow", 1))
		c.AttnScale = float32(mscale * mscale / math.Sqrt(float64(c.HeadDim)))
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

// yarn returns YaRN's RoPE scaling (llama.cpp's rope_yarn with ext_factor 1 and
// attn_factor 1, as it runs gpt-oss) as per-pair frequency divisors and the magnitude
// factor of the rotated values. Pair i's angle is pos·base^(−2i/dims)·m_i with m_i
// mixing interpolation (1/factor) and extrapolation (1) by a ramp that is 1 below the
// correction dimension of betaFast rotations over the original context (rounded down)
// and 0 above that of betaSlow (rounded up); the divisor is 1/m_i. The magnitude
// 1 + 0.1·ln(factor) multiplies queries and keys alike, so it scales the attention
// scores by its square.
func yarn(dims int, base, factor float64, orig int, betaFast, betaSlow float64) ([]float32, float64) {
	corr := func(rot float64) float64 {
		return float64(dims) * math.Log(float64(orig)/(rot*2*math.Pi)) / (2 * math.Log(base))
	}
	lo := max(0, math.Floor(corr(betaFast)))
	hi := min(float64(dims-1), math.Ceil(corr(betaSlow)))
	scale := 1 / factor
	div := make([]float32, dims/2)
	for i := range div {
		y := (float64(i) - lo) / math.Max(0.001, hi-lo)
		mix := 1 - math.Min(1, math.Max(0, y)) // 1: extrapolate, 0: interpolate
		div[i] = float32(1 / (scale*(1-mix) + mix))
	}
	return div, 1 + 0.1*math.Log(factor)
}
