package workloads

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"llmbench/engine"
	"llmbench/engine/sample"
)

// BatchSpec is TGI's benchmark (text-generation-benchmark, `llmbench batch`): for each
// batch size, Warmups then Runs runs, each prefilling BatchSize prompts of
// SequenceLength tokens in one step and decoding until every sequence holds
// DecodeLength new tokens (the prefill samples the first, so DecodeLength−1 decode
// steps, as TGI counts them). Field names follow TGI's flags.
type BatchSpec struct {
	// Model is the model of the in-process engine (a file, the built-in model or a
	// synthetic shape and type).
	Model BenchModel `yaml:"model" json:"model"`
	// Backend is inproc (the default) or an external server: openai, tgi or
	// llamacpp at BaseURL. On a server a batch is BatchSize simultaneous requests
	// and the figures are approximations (prefill ≈ the time to the last first
	// token, a decode step ≈ the mean gap between tokens).
	Backend string `yaml:"backend,omitempty" json:"backend,omitempty"`
	BaseURL string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	// ServerModel is the model name sent to a server (empty: its first model, for
	// openai); Tokenizer a GGUF file whose tokenizer sizes the prompt for a server
	// (empty: the built-in one).
	ServerModel string `yaml:"server_model,omitempty" json:"server_model,omitempty"`
	Tokenizer   string `yaml:"tokenizer,omitempty" json:"tokenizer,omitempty"`

	SequenceLength int   `yaml:"sequence_length" json:"sequence_length"`
	DecodeLength   int   `yaml:"decode_length" json:"decode_length"`
	BatchSize      []int `yaml:"batch_size" json:"batch_size"`
	Runs           int   `yaml:"runs" json:"runs"`
	// Warmups is the untimed runs before each batch size's runs; nil = TGI's 1.
	Warmups *int `yaml:"warmups,omitempty" json:"warmups,omitempty"`

	// The sampling parameters, as TGI's flags: unset (nil) is TGI's None.
	Temperature       *float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	TopK              *int     `yaml:"top_k,omitempty" json:"top_k,omitempty"`
	TopP              *float64 `yaml:"top_p,omitempty" json:"top_p,omitempty"`
	TypicalP          *float64 `yaml:"typical_p,omitempty" json:"typical_p,omitempty"`
	RepetitionPenalty *float64 `yaml:"repetition_penalty,omitempty" json:"repetition_penalty,omitempty"`
	Watermark         bool     `yaml:"watermark,omitempty" json:"watermark,omitempty"`
	DoSample          bool     `yaml:"do_sample,omitempty" json:"do_sample,omitempty"`
	Seed              uint64   `yaml:"seed,omitempty" json:"seed,omitempty"`

	// Threads is the engine's thread count (0 = all cores); KVType its KV cache type
	// (f16, q8_0, f32; empty = f16).
	Threads int    `yaml:"threads,omitempty" json:"threads,omitempty"`
	KVType  string `yaml:"kv_type,omitempty" json:"kv_type,omitempty"`
	// Label heads this run's section of a report, as TGI's published report heads
	// each tensor-parallel size ("Tensor Parallel (TP) - 2 GPUs"); empty: the
	// thread count ("CPU - 2 threads").
	Label string `yaml:"label,omitempty" json:"label,omitempty"`
}

// TGI's benchmark defaults.
const (
	DefaultBatchSequenceLength = 10
	DefaultBatchDecodeLength   = 8
	DefaultBatchRuns           = 10
	DefaultBatchWarmups        = 1
)

// DefaultBatchSizes are TGI's default batch sizes.
var DefaultBatchSizes = []int{1, 2, 4, 8, 16, 32}

// The batch backends: the in-process engine and the servers a batch can be sent to.
var BatchBackends = []string{"inproc", "openai", "tgi", "llamacpp"}

// WithDefaults fills the zero values with TGI's defaults.
func (s BatchSpec) WithDefaults() BatchSpec {
	if s.Backend == "" {
		s.Backend = "inproc"
	}
	if s.Backend == "inproc" && s.Model == (BenchModel{}) {
		s.Model = BenchModel{Path: BuiltinModel}
	}
	if s.SequenceLength == 0 {
		s.SequenceLength = DefaultBatchSequenceLength
	}
	if s.DecodeLength == 0 {
		s.DecodeLength = DefaultBatchDecodeLength
	}
	if len(s.BatchSize) == 0 {
		s.BatchSize = slices.Clone(DefaultBatchSizes)
	}
	if s.Runs == 0 {
		s.Runs = DefaultBatchRuns
	}
	if s.Warmups == nil {
		w := DefaultBatchWarmups
		s.Warmups = &w
	}
	if s.KVType == "" {
		s.KVType = DefaultBenchKV
	}
	return s
}

// NWarmups returns the warmup runs (TGI's default when unset).
func (s BatchSpec) NWarmups() int {
	if s.Warmups == nil {
		return DefaultBatchWarmups
	}
	return *s.Warmups
}

// SectionLabel returns the heading of the run's section: Label, else the thread
// count (threads: the engine's, when the spec leaves it to all cores).
func (s BatchSpec) SectionLabel(threads int) string {
	if s.Label != "" {
		return s.Label
	}
	if s.Backend != "" && s.Backend != "inproc" {
		return "Server - " + s.BaseURL
	}
	return fmt.Sprintf("CPU - %d threads", threads)
}

// Approximate reports whether the run measures a server from outside, where
// prefill and decode are read off the streamed tokens.
func (s BatchSpec) Approximate() bool { return s.Backend != "" && s.Backend != "inproc" }

// Validate reports the first value that cannot run, naming its flag; sampling
// options the sampler does not have (typical-p, watermark) are refused.
func (s BatchSpec) Validate() error {
	if !slices.Contains(BatchBackends, s.Backend) {
		return fmt.Errorf("--backend: %q is not one of %s", s.Backend, strings.Join(BatchBackends, ", "))
	}
	if s.Approximate() {
		if s.BaseURL == "" {
			return fmt.Errorf("--backend %s needs --url", s.Backend)
		}
		if s.RepetitionPenalty != nil {
			return errors.New("--repetition-penalty: sent to the in-process engine only, not to servers")
		}
	} else if (s.Model.Path == "") == (s.Model.Shape == "") {
		return errors.New("-m: give a model file, builtin:stories260K or synth:SHAPE:TYPE")
	}
	for _, c := range []struct {
		flag   string
		v, min int
	}{{"--sequence-length", s.SequenceLength, 1}, {"--decode-length", s.DecodeLength, 2}, {"--runs", s.Runs, 1}, {"--warmups", s.NWarmups(), 0}, {"-t", s.Threads, 0}} {
		if c.v < c.min {
			return fmt.Errorf("%s: %d is below the minimum (%d)", c.flag, c.v, c.min)
		}
	}
	if len(s.BatchSize) == 0 {
		return errors.New("--batch-size: no batch size")
	}
	for _, b := range s.BatchSize {
		if b < 1 {
			return fmt.Errorf("--batch-size: %d is below the minimum (1)", b)
		}
	}
	if err := (engine.Options{Threads: s.Threads}).Validate(); err != nil {
		return fmt.Errorf("-t: %w", err)
	}
	if s.TypicalP != nil {
		return errors.New("--typical-p: the sampler has no typical sampling (temperature, top-k, top-p and repetition penalty are supported)")
	}
	if s.Watermark {
		return errors.New("--watermark: the sampler has no watermarking (temperature, top-k, top-p and repetition penalty are supported)")
	}
	if s.Temperature != nil && (*s.Temperature <= 0 || isBad(*s.Temperature)) {
		return fmt.Errorf("--temperature: %v is not positive", *s.Temperature)
	}
	if s.TopK != nil && *s.TopK < 0 {
		return fmt.Errorf("--top-k: %d is negative", *s.TopK)
	}
	if s.TopP != nil && (*s.TopP <= 0 || *s.TopP > 1 || isBad(*s.TopP)) {
		return fmt.Errorf("--top-p: %v is not in (0, 1]", *s.TopP)
	}
	if s.RepetitionPenalty != nil && (*s.RepetitionPenalty <= 0 || isBad(*s.RepetitionPenalty)) {
		return fmt.Errorf("--repetition-penalty: %v is not positive", *s.RepetitionPenalty)
	}
	return nil
}

func isBad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// Sampling returns the sampler's parameters for TGI's: TGI samples when --do-sample
// is given or any warper is active (a temperature other than 1, top-k, top-p below
// 1), with temperature 1 unless given; otherwise it decodes greedily. The
// repetition penalty looks at the whole sequence, prompt included, as TGI's.
func (s BatchSpec) Sampling() sample.Params {
	p := sample.Params{Seed: s.Seed}
	temp := float32(1)
	if s.Temperature != nil {
		temp = float32(*s.Temperature)
	}
	warp := temp != 1
	if s.TopK != nil && *s.TopK > 0 {
		p.TopK, warp = *s.TopK, true
	}
	if s.TopP != nil && *s.TopP < 1 {
		p.TopP, warp = float32(*s.TopP), true
	}
	if s.DoSample || warp {
		p.Temperature = temp
	}
	if s.RepetitionPenalty != nil && *s.RepetitionPenalty != 1 {
		p.RepeatPenalty, p.RepeatLastN = float32(*s.RepetitionPenalty), -1
	}
	return p
}
