// Package synth writes synthetic models: a named shape (llama-7b, qwen2-0.5b, …) and a
// quantization mix become a real GGUF file with seeded random weights at a realistic
// scale and a working tokenizer, with tensor names and metadata keys as llama.cpp writes
// them. Every benchmark can then run without downloading a model, and llama.cpp itself
// loads the same files.
//
// Files are streamed: weights are generated and quantized chunk by chunk on all cores and
// written in order, so writing a 12B model needs a few megabytes of memory. Synthetic
// models are cached (see Ensure) under the user's cache directory.
package synth

import (
	"fmt"
	"slices"
	"strings"
)

// VocabKind selects how a shape's tokenizer is built.
type VocabKind int

// The tokenizer families a shape can have.
const (
	// VocabSPM is a SentencePiece vocabulary (tokenizer.ggml.model = "llama") with
	// <unk>, <s>, </s>, 256 byte-fallback tokens and ▁-prefixed pieces with scores.
	VocabSPM VocabKind = iota
	// VocabLlama3 is a byte-level BPE vocabulary (tokenizer.ggml.model = "gpt2",
	// pre = "llama-bpe") with merges and Llama 3's special tokens.
	VocabLlama3
	// VocabQwen2 is a byte-level BPE vocabulary (pre = "qwen2") with merges and Qwen2's
	// special tokens.
	VocabQwen2
)

// Shape is the architecture and hyperparameters of a named model, as the original
// checkpoint's config.json gives them.
type Shape struct {
	Name        string // the synth name ("llama-1b")
	Description string // the model it imitates
	Arch        string // general.architecture: "llama", "qwen2", "qwen3", "qwen3moe" or "gpt-oss"

	Vocab   int // vocabulary size (rows of token_embd)
	Embd    int // hidden size (n_embd)
	Layers  int // transformer blocks
	Heads   int // attention heads
	HeadsKV int // key/value heads (GQA)
	FF      int // feed-forward (intermediate) size
	// HeadDim is the per-head size when it is not Embd/Heads (Mistral Nemo); 0 means
	// Embd/Heads. When set, the key_length/value_length keys are written.
	HeadDim  int
	Context  int     // training context length
	RopeBase float32 // rope theta
	RMSEps   float32 // RMSNorm epsilon
	// Tied means the output projection shares token_embd (no output.weight tensor).
	Tied bool
	// QKVBias means attn_q/attn_k/attn_v have bias vectors (qwen2).
	QKVBias bool
	// QKNorm means each query and key head is RMS-normalised with its own weights
	// (attn_q_norm, attn_k_norm; qwen3).
	QKNorm bool
	// Experts is the number of routed experts in each block's feed-forward network
	// (qwen3moe; 0: a dense FFN of FF), ExpertsUsed how many each token takes and
	// ExpertFF each expert's intermediate size (moe_intermediate_size). FF is then
	// the checkpoint's dense intermediate_size, written as llama.cpp's converter does
	// but used by no tensor.
	Experts, ExpertsUsed, ExpertFF int
	Tok                            VocabKind

	// SlidingWindow is the window of the sliding-window attention layers (gpt-oss:
	// every even block; 0: none). YaRNFactor and YaRNContext are the YaRN RoPE
	// scaling factor and the original (pre-scaling) context length (0: no scaling).
	SlidingWindow int
	YaRNFactor    float32
	YaRNContext   int

	// DraftLayers, when set, makes the shape the target of a speculative-decoding pair
	// whose draft is the shape "NAME-draft" (DraftSuffix): the draft has the target's
	// vocabulary, embeddings, output head and first DraftLayers blocks, value for value
	// (same seed). The target's later blocks add ExtraScale times the usual residual
	// (their attn_output and ffn_down weights are drawn that much smaller), which sets
	// how often the pair agrees; OutputScale multiplies output_norm (mean 1 otherwise)
	// so that the logits are as peaked as a trained model's and a draft's confidence
	// (--draft-p-min) means something.
	DraftLayers int
	ExtraScale  float32
	OutputScale float32
	// DraftOf is the target's name on a draft shape (Lookup of "NAME-draft").
	DraftOf string
}

// DraftSuffix turns a pair target's shape name into its draft's.
const DraftSuffix = "-draft"

// gptOSS reports whether the shape is laid out as llama.cpp's gpt-oss (LLM_ARCH_OPENAI_MOE):
// an attn_output bias, per-head attention sinks, post_attention_norm before the experts,
// and biases on the router and every expert projection.
func (s Shape) gptOSS() bool { return s.Arch == "gpt-oss" }

// headDim returns the size of one attention head.
func (s Shape) headDim() int {
	if s.HeadDim > 0 {
		return s.HeadDim
	}
	return s.Embd / s.Heads
}

// shapes is the table of named shapes. Sources are the Hugging Face config.json of each
// checkpoint (and, for the context lengths, the values llama.cpp's converters write).
var shapes = []Shape{
	{
		// karpathy/tinyllamas stories15M (llama2.c): dim 288, 6 layers, 6 heads,
		// hidden_dim 768, vocab 32000, shared classifier (tied). llama2.c trained it with
		// a 256-token context; llama.cpp's llama2.c converter writes 2048 (as in the
		// stories260K fixture), which is what we use so benchmarks can fill pp512.
		Name: "llama-tiny", Description: "stories15M (llama2.c tinyllamas)", Arch: "llama",
		Vocab: 32000, Embd: 288, Layers: 6, Heads: 6, HeadsKV: 6, FF: 768,
		Context: 2048, RopeBase: 10000, RMSEps: 1e-5, Tied: true, Tok: VocabSPM,
	},
	{
		// karpathy/tinyllamas stories110M (llama2.c): dim 768, 12 layers, 12 heads,
		// hidden_dim 2048, vocab 32000, shared classifier (tied); context 2048 as for
		// llama-tiny. The smallest shape whose rows are multiples of 256, so the K-quants
		// (Q4_K_M, Q6_K) are what they say rather than their 32-block fallbacks.
		Name: "llama-small", Description: "stories110M (llama2.c tinyllamas)", Arch: "llama",
		Vocab: 32000, Embd: 768, Layers: 12, Heads: 12, HeadsKV: 12, FF: 2048,
		Context: 2048, RopeBase: 10000, RMSEps: 1e-5, Tied: true, Tok: VocabSPM,
	},
	{
		// TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json: hidden 2048, intermediate 5632,
		// 22 layers, 32 heads, 4 KV heads, max_position_embeddings 2048, rope_theta 1e4,
		// rms_norm_eps 1e-5, untied.
		Name: "llama-1b", Description: "TinyLlama 1.1B", Arch: "llama",
		Vocab: 32000, Embd: 2048, Layers: 22, Heads: 32, HeadsKV: 4, FF: 5632,
		Context: 2048, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
	},
	{
		// meta-llama/Llama-2-7b-hf config.json: hidden 4096, intermediate 11008,
		// 32 layers, 32 heads (MHA), max_position_embeddings 4096, rope_theta 1e4,
		// rms_norm_eps 1e-5, untied.
		Name: "llama-7b", Description: "Llama 2 7B", Arch: "llama",
		Vocab: 32000, Embd: 4096, Layers: 32, Heads: 32, HeadsKV: 32, FF: 11008,
		Context: 4096, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
	},
	{
		// meta-llama/Meta-Llama-3-8B config.json: vocab 128256, hidden 4096,
		// intermediate 14336, 32 layers, 32 heads, 8 KV heads, max_position_embeddings
		// 8192, rope_theta 5e5, rms_norm_eps 1e-5, untied.
		Name: "llama-8b", Description: "Llama 3 8B", Arch: "llama",
		Vocab: 128256, Embd: 4096, Layers: 32, Heads: 32, HeadsKV: 8, FF: 14336,
		Context: 8192, RopeBase: 500000, RMSEps: 1e-5, Tok: VocabLlama3,
	},
	{
		// Qwen/Qwen2-0.5B config.json: vocab 151936, hidden 896, intermediate 4864,
		// 24 layers, 14 heads, 2 KV heads, rope_theta 1e6, rms_norm_eps 1e-6, tied
		// embeddings, q/k/v biases. Context 32768 as in Qwen's own GGUF releases.
		Name: "qwen2-0.5b", Description: "Qwen2 0.5B", Arch: "qwen2",
		Vocab: 151936, Embd: 896, Layers: 24, Heads: 14, HeadsKV: 2, FF: 4864,
		Context: 32768, RopeBase: 1000000, RMSEps: 1e-6, Tied: true, QKVBias: true, Tok: VocabQwen2,
	},
	{
		// Qwen/Qwen2-7B config.json: vocab 152064, hidden 3584, intermediate 18944,
		// 28 layers, 28 heads, 4 KV heads, rope_theta 1e6, rms_norm_eps 1e-6, untied,
		// q/k/v biases. Context 32768 as in Qwen's own GGUF releases.
		Name: "qwen2-7b", Description: "Qwen2 7B", Arch: "qwen2",
		Vocab: 152064, Embd: 3584, Layers: 28, Heads: 28, HeadsKV: 4, FF: 18944,
		Context: 32768, RopeBase: 1000000, RMSEps: 1e-6, QKVBias: true, Tok: VocabQwen2,
	},
	{
		// A small qwen3 (no released model has this shape) that writes and runs in
		// seconds: Qwen3's layout (head size 128, so 4×128 = 512 ≠ 256; 2 KV heads; q/k
		// norms; tied) and vocabulary, 2 blocks.
		Name: "qwen3-tiny", Description: "small Qwen3-style model", Arch: "qwen3",
		Vocab: 151936, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2, FF: 768, HeadDim: 128,
		Context: 40960, RopeBase: 1000000, RMSEps: 1e-6, Tied: true, QKNorm: true, Tok: VocabQwen2,
	},
	{
		// Qwen/Qwen3-0.6B config.json: vocab 151936, hidden 1024, intermediate 3072,
		// 28 layers, 16 heads, 8 KV heads, head_dim 128 (16×128 = 2048 ≠ 1024),
		// max_position_embeddings 40960, rope_theta 1e6, rms_norm_eps 1e-6, tied
		// embeddings, no biases, q/k norms (0.44 B parameters besides the embedding).
		Name: "qwen3-0.6b", Description: "Qwen3 0.6B", Arch: "qwen3",
		Vocab: 151936, Embd: 1024, Layers: 28, Heads: 16, HeadsKV: 8, FF: 3072, HeadDim: 128,
		Context: 40960, RopeBase: 1000000, RMSEps: 1e-6, Tied: true, QKNorm: true, Tok: VocabQwen2,
	},
	{
		// A small qwen3moe (no released model has this shape) that writes and runs in
		// seconds: Qwen3-MoE's layout (head size 128, 2 KV heads, q/k norms, untied
		// output, top-8 of 128 experts scaled down to top-2 of 8) and vocabulary, 2
		// blocks.
		Name: "qwen3moe-tiny", Description: "small Qwen3-MoE-style model", Arch: "qwen3moe",
		Vocab: 151936, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2, FF: 768, HeadDim: 128,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256,
		Context: 40960, RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, Tok: VocabQwen2,
	},
	{
		// Qwen/Qwen3-30B-A3B config.json: vocab 151936, hidden 2048, 48 layers, 32 heads,
		// 4 KV heads, head_dim 128, num_experts 128, num_experts_per_tok 8,
		// moe_intermediate_size 768, intermediate_size 6144 (unused: every block is
		// sparse), max_position_embeddings 40960, rope_theta 1e6, rms_norm_eps 1e-6,
		// untied, q/k norms, norm_topk_prob true. 30.53 B parameters, 3.3 B active.
		Name: "qwen3moe-30b-a3b", Description: "Qwen3 30B-A3B", Arch: "qwen3moe",
		Vocab: 151936, Embd: 2048, Layers: 48, Heads: 32, HeadsKV: 4, FF: 6144, HeadDim: 128,
		Experts: 128, ExpertsUsed: 8, ExpertFF: 768,
		Context: 40960, RopeBase: 1000000, RMSEps: 1e-6, QKNorm: true, Tok: VocabQwen2,
	},
	{
		// A small gpt-oss (no released model has this shape) that writes and runs in
		// seconds: gpt-oss's layout (heads of 64, sinks, every bias, a window of 128 on
		// the even blocks, YaRN ×32 over 4096, untied output, 4 of 32 experts scaled
		// down to 2 of 8) and vocabulary size, 2 blocks.
		Name: "gpt-oss-tiny", Description: "small gpt-oss-style model", Arch: "gpt-oss",
		Vocab: 201088, Embd: 256, Layers: 2, Heads: 4, HeadsKV: 2, FF: 256, HeadDim: 64,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SlidingWindow: 128, YaRNFactor: 32, YaRNContext: 4096,
		Context: 131072, RopeBase: 150000, RMSEps: 1e-5, QKVBias: true, Tok: VocabQwen2,
	},
	{
		// openai/gpt-oss-20b config.json: vocab 201088, hidden 2880, 24 layers, 64
		// heads, 8 KV heads, head_dim 64 (64×64 = 4096 ≠ 2880), num_local_experts 32,
		// experts_per_token 4, intermediate_size 2880 (each expert's), sliding_window
		// 128 on every other layer (layer_types: sliding first), rope_theta 150000 with
		// YaRN factor 32 over original_max_position_embeddings 4096 (so
		// max_position_embeddings 131072), rms_norm_eps 1e-5, untied, q/k/v/o biases,
		// attention sinks, router and expert biases. 20.91 B parameters. The real
		// tokenizer is o200k_harmony (pre-tokenizer "gpt-4o"); the synthetic one is a
		// byte-level BPE vocabulary of the same size.
		Name: "gpt-oss-20b", Description: "gpt-oss 20B", Arch: "gpt-oss",
		Vocab: 201088, Embd: 2880, Layers: 24, Heads: 64, HeadsKV: 8, FF: 2880, HeadDim: 64,
		Experts: 32, ExpertsUsed: 4, ExpertFF: 2880, SlidingWindow: 128, YaRNFactor: 32, YaRNContext: 4096,
		Context: 131072, RopeBase: 150000, RMSEps: 1e-5, QKVBias: true, Tok: VocabQwen2,
	},
	{
		// openai/gpt-oss-120b config.json: as gpt-oss-20b but 36 layers and 128 experts
		// (4 per token). llama-bench: "gpt-oss 120B … 116.83 B" params.
		Name: "gpt-oss-120b", Description: "gpt-oss 120B", Arch: "gpt-oss",
		Vocab: 201088, Embd: 2880, Layers: 36, Heads: 64, HeadsKV: 8, FF: 2880, HeadDim: 64,
		Experts: 128, ExpertsUsed: 4, ExpertFF: 2880, SlidingWindow: 128, YaRNFactor: 32, YaRNContext: 4096,
		Context: 131072, RopeBase: 150000, RMSEps: 1e-5, QKVBias: true, Tok: VocabQwen2,
	},
	{
		// mistralai/Mistral-Nemo-Base-2407 config.json: vocab 131072, hidden 5120,
		// intermediate 14336, 40 layers, 32 heads, 8 KV heads, head_dim 128 (so
		// 32×128 = 4096 ≠ 5120), max_position_embeddings 1024000, rope_theta 1e6,
		// rms_norm_eps 1e-5, untied. The real model uses the "tekken" BPE tokenizer; the
		// synthetic one gets a SentencePiece vocabulary of the same size, which every
		// llama.cpp build and llmbench's tokenizer read.
		Name: "mistral-nemo-12b", Description: "Mistral Nemo 12B", Arch: "llama",
		Vocab: 131072, Embd: 5120, Layers: 40, Heads: 32, HeadsKV: 8, FF: 14336, HeadDim: 128,
		Context: 1024000, RopeBase: 1000000, RMSEps: 1e-5, Tok: VocabSPM,
	},
	{
		// meta-llama/Llama-2-13b-hf config.json: hidden 5120, intermediate 13824,
		// 40 layers, 40 heads (MHA), max_position_embeddings 4096, rope_theta 1e4,
		// rms_norm_eps 1e-5, untied. llama-bench prints 13.02 B params for it.
		Name: "llama-13b", Description: "Llama 2 13B", Arch: "llama",
		Vocab: 32000, Embd: 5120, Layers: 40, Heads: 40, HeadsKV: 40, FF: 13824,
		Context: 4096, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
	},
	{
		// meta-llama/Llama-2-70b-hf config.json: hidden 8192, intermediate 28672,
		// 80 layers, 64 heads, 8 KV heads (GQA), max_position_embeddings 4096,
		// rope_theta 1e4, rms_norm_eps 1e-5, untied. llama-bench prints 68.98 B.
		Name: "llama-70b", Description: "Llama 2 70B", Arch: "llama",
		Vocab: 32000, Embd: 8192, Layers: 80, Heads: 64, HeadsKV: 8, FF: 28672,
		Context: 4096, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
	},
	{
		// A speculative-decoding pair small enough to write in well under a second, for
		// tests: the draft keeps 1 of 6 blocks. The output head is untied (a tied one
		// makes random models repeat their input token, which any draft predicts).
		// ExtraScale and OutputScale were measured (engine's TestPairAcceptance) so
		// that greedy decoding accepts 60–85 % of the draft's proposals under the
		// published llama-server settings (--draft-max 24 --draft-min 1 --draft-p-min
		// 0.6), as real pairs do, with 2–3 tokens per step.
		Name: "spec-tiny", Description: "speculative-decoding pair (tests)", Arch: "llama",
		Vocab: 2048, Embd: 128, Layers: 6, Heads: 4, HeadsKV: 4, FF: 384,
		Context: 2048, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
		DraftLayers: 1, ExtraScale: 0.05, OutputScale: 32,
	},
	{
		// The pair of the spec-decode-ab experiment: a target of 12 blocks (GQA 3:1, a
		// 4096-token vocabulary so that the output head does not dominate the draft)
		// and a draft of 1 block, about a sixth of the target's weights, large enough
		// (80 M parameters) that decoding reads the weights from memory, as real
		// models do. Scales measured as spec-tiny's (77 % accepted, 2.5 tokens a step
		// on 8 random prompts).
		Name: "spec-base", Description: "speculative-decoding pair (A/B)", Arch: "llama",
		Vocab: 4096, Embd: 768, Layers: 12, Heads: 12, HeadsKV: 4, FF: 2048,
		Context: 4096, RopeBase: 10000, RMSEps: 1e-5, Tok: VocabSPM,
		DraftLayers: 1, ExtraScale: 0.02, OutputScale: 13,
	},
}

// Shapes returns the names of the built-in shapes, smallest first, each pair's draft
// after its target.
func Shapes() []string {
	out := make([]string, 0, len(shapes)+2)
	for _, s := range shapes {
		out = append(out, s.Name)
		if s.DraftLayers > 0 {
			out = append(out, s.Name+DraftSuffix)
		}
	}
	return out
}

// Lookup returns the named shape (case-insensitive); "NAME-draft" is the draft of the
// pair target NAME.
func Lookup(name string) (Shape, error) {
	for _, s := range shapes {
		if strings.EqualFold(s.Name, name) {
			return s, nil
		}
		if s.DraftLayers > 0 && strings.EqualFold(s.Name+DraftSuffix, name) {
			return s.Draft(), nil
		}
	}
	return Shape{}, fmt.Errorf("synth: unknown shape %q (known: %s)", name, strings.Join(Shapes(), ", "))
}

// Draft returns the draft shape of a pair target (see DraftLayers).
func (s Shape) Draft() Shape {
	d := s
	d.Name = s.Name + DraftSuffix
	d.Description = "draft of " + s.Name + " (" + s.Description + ")"
	d.Layers, d.DraftLayers, d.DraftOf = s.DraftLayers, 0, s.Name
	return d
}

// target returns the pair target a draft shape comes from.
func (s Shape) target() (Shape, error) {
	t, err := Lookup(s.DraftOf)
	if err != nil || t.DraftLayers != s.Layers {
		return Shape{}, fmt.Errorf("synth: shape %s: not the draft of a pair target %q", s.Name, s.DraftOf)
	}
	return t, nil
}

// Validate checks that the hyperparameters are consistent.
func (s Shape) Validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("synth: shape has no name")
	case !slices.Contains([]string{"llama", "qwen2", "qwen3", "qwen3moe", "gpt-oss"}, s.Arch):
		return fmt.Errorf("synth: shape %s: architecture %q is not supported", s.Name, s.Arch)
	case (s.Arch == "qwen3moe" || s.Arch == "gpt-oss") != (s.Experts > 0):
		return fmt.Errorf("synth: shape %s: routed experts go with qwen3moe and gpt-oss, and those have them", s.Name)
	case (s.SlidingWindow != 0 || s.YaRNFactor != 0) && s.Arch != "gpt-oss":
		return fmt.Errorf("synth: shape %s: sliding-window layers and YaRN scaling are written for gpt-oss only", s.Name)
	case s.SlidingWindow < 0 || s.YaRNFactor < 0 || (s.YaRNFactor > 0) != (s.YaRNContext > 0):
		return fmt.Errorf("synth: shape %s: bad sliding window %d or YaRN factor %g over %d", s.Name, s.SlidingWindow, s.YaRNFactor, s.YaRNContext)
	case s.Experts > 0 && (s.ExpertsUsed <= 0 || s.ExpertsUsed > s.Experts || s.ExpertFF <= 0 || s.ExpertFF%32 != 0):
		return fmt.Errorf("synth: shape %s: %d of %d experts of %d each (need 1…%d used, a multiple of 32 wide)", s.Name, s.ExpertsUsed, s.Experts, s.ExpertFF, s.Experts)
	case s.Vocab < minVocab(s.Tok):
		return fmt.Errorf("synth: shape %s: vocabulary of %d is too small (need %d)", s.Name, s.Vocab, minVocab(s.Tok))
	case s.Embd <= 0 || s.Layers <= 0 || s.FF <= 0 || s.Heads <= 0 || s.HeadsKV <= 0:
		return fmt.Errorf("synth: shape %s: sizes must be positive", s.Name)
	case s.Heads%s.HeadsKV != 0:
		return fmt.Errorf("synth: shape %s: %d heads is not a multiple of %d KV heads", s.Name, s.Heads, s.HeadsKV)
	case s.HeadDim == 0 && s.Embd%s.Heads != 0:
		return fmt.Errorf("synth: shape %s: embedding %d is not a multiple of %d heads", s.Name, s.Embd, s.Heads)
	case s.headDim()%2 != 0:
		return fmt.Errorf("synth: shape %s: head size %d is odd", s.Name, s.headDim())
	case s.Context <= 0 || s.RopeBase <= 0 || s.RMSEps <= 0:
		return fmt.Errorf("synth: shape %s: context, rope base and eps must be positive", s.Name)
	case slices.ContainsFunc([]int{s.Embd, s.FF, s.Heads * s.headDim(), s.HeadsKV * s.headDim()}, func(n int) bool { return n%32 != 0 }):
		return fmt.Errorf("synth: shape %s: matrix sizes must be multiples of 32", s.Name)
	case s.DraftLayers < 0 || s.DraftLayers >= s.Layers && s.DraftLayers > 0:
		return fmt.Errorf("synth: shape %s: a draft of %d of %d blocks", s.Name, s.DraftLayers, s.Layers)
	}
	if s.DraftOf != "" {
		if _, err := s.target(); err != nil {
			return err
		}
	}
	return nil
}
