package workloads

import (
	"fmt"
	"slices"
	"strings"

	"llmbench/engine/synth"
)

// ThroughputSpec is a JetStream-style throughput run (`llmbench throughput`, JetStream's
// benchmark_serving with its server's --batch_size, --max_cache_length and the
// benchmark's --max-input-length / --max-output-length): every prompt of a sharegpt
// file, cut to MaxInputLength tokens, is sent at once to the in-process engine, which
// runs up to BatchSize sequences together and decodes MaxOutputLength tokens for each
// (end-of-sequence ignored); the figure is output tokens per second. When the cache is
// shorter than input + output the engine keeps each sequence's last MaxCacheLength
// positions (rolling-window attention), as JetStream does. One row per weights type:
// the same weights (a synthetic model written once in BF16, or the file given) in each
// type, quantized as llama-quantize does, so the dtypes compare on equal terms.
type ThroughputSpec struct {
	// Model is a synthetic shape ("llama-tiny"), a GGUF file, or the built-in model.
	Model string `json:"model" yaml:"model"`
	// WeightsTypes are the rows' weight types (BF16, Q8_0, F16, Q4_0, …); empty: the
	// model's own weights, one row.
	WeightsTypes []string `json:"weights_types,omitempty" yaml:"weights_types,omitempty"`
	// KVCacheTypes are the rows' KV cache types (f16, q8_0, f32): one per weights type,
	// or one for every row; empty: q8_0 with Q8_0 weights (JetStream's int8 quantizes
	// both), f16 otherwise.
	KVCacheTypes    []string `json:"kv_cache_types,omitempty" yaml:"kv_cache_types,omitempty"`
	BatchSize       int      `json:"batch_size" yaml:"batch_size"`
	MaxCacheLength  int      `json:"max_cache_length" yaml:"max_cache_length"`
	MaxInputLength  int      `json:"max_input_length" yaml:"max_input_length"`
	MaxOutputLength int      `json:"max_output_length" yaml:"max_output_length"`
	NumPrompts      int      `json:"num_prompts" yaml:"num_prompts"`
	DatasetPath     string   `json:"dataset_path" yaml:"dataset_path"` // a sharegpt JSON file
	Seed            int64    `json:"seed,omitempty" yaml:"seed,omitempty"`
	Threads         int      `json:"threads,omitempty" yaml:"threads,omitempty"`
}

// ThroughputRow is one row of a throughput run: its weights type ("" = the model's
// own) and KV cache type.
type ThroughputRow struct {
	Weights, KV string
}

// Rows returns the run's rows, KV types filled in.
func (t ThroughputSpec) Rows() []ThroughputRow {
	ws := t.WeightsTypes
	if len(ws) == 0 {
		ws = []string{""}
	}
	out := make([]ThroughputRow, len(ws))
	for i, w := range ws {
		kv := "f16"
		switch {
		case len(t.KVCacheTypes) == len(ws):
			kv = t.KVCacheTypes[i]
		case len(t.KVCacheTypes) == 1:
			kv = t.KVCacheTypes[0]
		case strings.EqualFold(w, "Q8_0"):
			kv = "q8_0"
		}
		out[i] = ThroughputRow{Weights: strings.ToUpper(w), KV: strings.ToLower(kv)}
	}
	return out
}

// Dtype names a row as JetStream's table does: "bfloat16" and "float16" for 16-bit
// weights with an f16 cache, "int8" for Q8_0 weights with a q8_0 cache, otherwise the
// weights and cache types ("q4_0 / f16"); model names the model's own weights.
func (r ThroughputRow) Dtype(model string) string {
	w := r.Weights
	if w == "" {
		w = model
	}
	switch {
	case w == "BF16" && r.KV == "f16":
		return "bfloat16"
	case w == "F16" && r.KV == "f16":
		return "float16"
	case w == "Q8_0" && r.KV == "q8_0":
		return "int8"
	}
	return strings.ToLower(w) + " / " + r.KV
}

// RollingWindow reports whether the cache is shorter than input + output, so the
// engine runs rolling-window attention (as JetStream does then).
func (t ThroughputSpec) RollingWindow() bool {
	return t.MaxCacheLength < t.MaxInputLength+t.MaxOutputLength
}

// RollingWindowNote says in one line whether the engine will run rolling-window
// attention and why, as a throughput run logs it: "rolling window: cache 512 < input
// 256 + output 512, each sequence keeps its last 512 positions", or "no rolling
// window: cache 1024 ≥ input 256 + output 512, every sequence fits whole".
func (t ThroughputSpec) RollingWindowNote() string {
	if t.RollingWindow() {
		return fmt.Sprintf("rolling window: cache %d < input %d + output %d, each sequence keeps its last %d positions",
			t.MaxCacheLength, t.MaxInputLength, t.MaxOutputLength, t.MaxCacheLength)
	}
	return fmt.Sprintf("no rolling window: cache %d ≥ input %d + output %d, every sequence fits whole",
		t.MaxCacheLength, t.MaxInputLength, t.MaxOutputLength)
}

// Validate says in one line what is wrong with the spec (nil: nothing).
func (t ThroughputSpec) Validate() error {
	switch {
	case t.BatchSize <= 0:
		return fmt.Errorf("--batch-size must be positive")
	case t.MaxCacheLength <= 0 || t.MaxInputLength <= 0 || t.MaxOutputLength <= 0:
		return fmt.Errorf("--max-cache-length, --max-input-length and --max-output-length must be positive")
	case t.NumPrompts <= 0:
		return fmt.Errorf("--num-prompts must be positive")
	case t.DatasetPath == "":
		return fmt.Errorf("--dataset-path: give a sharegpt JSON file")
	case t.Threads < 0:
		return fmt.Errorf("-t must not be negative")
	case len(t.KVCacheTypes) > 1 && len(t.KVCacheTypes) != len(t.WeightsTypes):
		return fmt.Errorf("--kv-cache-type: give one type, or one per --weights-type (%d)", len(t.WeightsTypes))
	}
	if len(t.WeightsTypes) > 0 && (t.Model == "" || t.Model == BuiltinModel) {
		return fmt.Errorf("--weights-type: the built-in model keeps its F32 weights; give a synthetic shape or an F32/F16/BF16 GGUF file")
	}
	for _, w := range t.WeightsTypes {
		if _, err := synth.ParseFileType(w); err != nil {
			return fmt.Errorf("--weights-type: %w", err)
		}
	}
	for _, r := range t.Rows() {
		if !slices.Contains(KVCacheTypes, r.KV) {
			return fmt.Errorf("--kv-cache-type %q: want %s", r.KV, strings.Join(KVCacheTypes, ", "))
		}
	}
	return nil
}
