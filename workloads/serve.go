package workloads

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is a request rate in requests per second; +Inf means "send everything at
// once" and is written as "inf" in JSON and YAML, as vLLM writes it.
type Rate float64

// Inf is the rate that sends all requests at time 0.
var Inf = Rate(math.Inf(1))

// IsInf reports whether the rate is unbounded.
func (r Rate) IsInf() bool { return math.IsInf(float64(r), 1) }

// String formats the rate as vLLM prints it ("inf", "10.0").
func (r Rate) String() string {
	if r.IsInf() {
		return "inf"
	}
	s := strconv.FormatFloat(float64(r), 'f', -1, 64)
	if float64(r) == math.Trunc(float64(r)) {
		s += ".0"
	}
	return s
}

// MarshalJSON writes "inf" for an unbounded rate, a number otherwise.
func (r Rate) MarshalJSON() ([]byte, error) {
	if r.IsInf() {
		return []byte(`"inf"`), nil
	}
	return json.Marshal(float64(r))
}

// UnmarshalJSON reads a number or "inf".
func (r *Rate) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64)
		*r = Rate(v)
		return err
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*r = Rate(v)
	return err
}

// MarshalText writes the rate for YAML and flags.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a number or "inf".
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := strconv.ParseFloat(string(b), 64)
	*r = Rate(v)
	return err
}

// DatasetSpec says where the prompts of a serving benchmark come from; names follow
// vllm bench serve's flags.
type DatasetSpec struct {
	Name       string `json:"dataset_name" yaml:"dataset_name"` // sharegpt, sonnet, random, prefix_repetition, custom
	Path       string `json:"dataset_path,omitempty" yaml:"dataset_path,omitempty"`
	NumPrompts int    `json:"num_prompts" yaml:"num_prompts"`
	Seed       int64  `json:"seed" yaml:"seed"`

	RandomInputLen   int     `json:"random_input_len,omitempty" yaml:"random_input_len,omitempty"`
	RandomOutputLen  int     `json:"random_output_len,omitempty" yaml:"random_output_len,omitempty"`
	RandomRangeRatio float64 `json:"random_range_ratio,omitempty" yaml:"random_range_ratio,omitempty"`
	RandomPrefixLen  int     `json:"random_prefix_len,omitempty" yaml:"random_prefix_len,omitempty"`

	SonnetInputLen  int `json:"sonnet_input_len,omitempty" yaml:"sonnet_input_len,omitempty"`
	SonnetOutputLen int `json:"sonnet_output_len,omitempty" yaml:"sonnet_output_len,omitempty"`
	SonnetPrefixLen int `json:"sonnet_prefix_len,omitempty" yaml:"sonnet_prefix_len,omitempty"`

	ShareGPTOutputLen int `json:"sharegpt_output_len,omitempty" yaml:"sharegpt_output_len,omitempty"`
	// ShareGPTMaxInputLen, when > 0, cuts longer sharegpt prompts to their first
	// ShareGPTMaxInputLen tokens (JetStream's --max-input-length) instead of dropping
	// those over vLLM's 1024.
	ShareGPTMaxInputLen int `json:"sharegpt_max_input_len,omitempty" yaml:"sharegpt_max_input_len,omitempty"`

	PrefixRepetitionPrefixLen   int `json:"prefix_repetition_prefix_len,omitempty" yaml:"prefix_repetition_prefix_len,omitempty"`
	PrefixRepetitionSuffixLen   int `json:"prefix_repetition_suffix_len,omitempty" yaml:"prefix_repetition_suffix_len,omitempty"`
	PrefixRepetitionNumPrefixes int `json:"prefix_repetition_num_prefixes,omitempty" yaml:"prefix_repetition_num_prefixes,omitempty"`
	PrefixRepetitionOutputLen   int `json:"prefix_repetition_output_len,omitempty" yaml:"prefix_repetition_output_len,omitempty"`

	CustomOutputLen int `json:"custom_output_len,omitempty" yaml:"custom_output_len,omitempty"`

	// NoOversample (vLLM's --no-oversample) keeps a sharegpt or custom dataset at the
	// prompts that passed the filters instead of repeating some to reach NumPrompts.
	NoOversample bool `json:"no_oversample,omitempty" yaml:"no_oversample,omitempty"`

	// DisableShuffle keeps the file's order for sharegpt, custom and spec_bench
	// (vLLM shuffles them with --seed; --disable-shuffle).
	DisableShuffle bool `json:"disable_shuffle,omitempty" yaml:"disable_shuffle,omitempty"`
	// SpecBenchOutputLen and SpecBenchCategory shape the spec_bench dataset (its
	// question.jsonl): output tokens (default 256) and the one category kept.
	SpecBenchOutputLen int    `json:"spec_bench_output_len,omitempty" yaml:"spec_bench_output_len,omitempty"`
	SpecBenchCategory  string `json:"spec_bench_category,omitempty" yaml:"spec_bench_category,omitempty"`
}

// ServeSpec is one point of a serving benchmark (llmbench serve-bench, vllm bench
// serve's options): which backend, which prompts, at what arrival rate and
// concurrency, and what to report. Headers are held by name only: their values may be
// secrets and never leave the process.
type ServeSpec struct {
	Backend         string   `json:"backend" yaml:"backend"` // inproc, openai, openai-chat, tgi, llamacpp
	BaseURL         string   `json:"base_url,omitempty" yaml:"base_url,omitempty"`
	Endpoint        string   `json:"endpoint,omitempty" yaml:"endpoint,omitempty"`
	Model           string   `json:"model" yaml:"model"`
	ServedModelName string   `json:"served_model_name,omitempty" yaml:"served_model_name,omitempty"`
	Tokenizer       string   `json:"tokenizer,omitempty" yaml:"tokenizer,omitempty"`
	HeaderNames     []string `json:"header_names,omitempty" yaml:"header_names,omitempty"`
	Label           string   `json:"label,omitempty" yaml:"label,omitempty"`

	Dataset DatasetSpec `json:"dataset" yaml:"dataset"`

	RequestRate     Rate    `json:"request_rate" yaml:"request_rate"`
	Burstiness      float64 `json:"burstiness" yaml:"burstiness"`
	MaxConcurrency  int     `json:"max_concurrency,omitempty" yaml:"max_concurrency,omitempty"` // 0 = unbounded
	RampUpStrategy  string  `json:"ramp_up_strategy,omitempty" yaml:"ramp_up_strategy,omitempty"`
	RampUpStartRPS  float64 `json:"ramp_up_start_rps,omitempty" yaml:"ramp_up_start_rps,omitempty"`
	RampUpEndRPS    float64 `json:"ramp_up_end_rps,omitempty" yaml:"ramp_up_end_rps,omitempty"`
	NumWarmups      int     `json:"num_warmups,omitempty" yaml:"num_warmups,omitempty"`
	IgnoreEOS       bool    `json:"ignore_eos,omitempty" yaml:"ignore_eos,omitempty"`
	RequestTimeoutS float64 `json:"request_timeout_s,omitempty" yaml:"request_timeout_s,omitempty"`
	// WarmConnections opens up to MaxConcurrency keep-alive connections before the
	// clock starts (HTTP backends), so TTFT holds no connection set-up.
	WarmConnections bool `json:"warm_connections,omitempty" yaml:"warm_connections,omitempty"`
	// NonStreaming asks every request for its whole answer at once (--non-streaming):
	// "stream": false, TGI's /generate, the in-process engine's answer in one piece.
	// Only E2EL is measured; TTFT, TPOT and ITL are not (n/a), so goodput SLOs on them
	// are refused (CheckNonStreaming).
	NonStreaming bool `json:"non_streaming,omitempty" yaml:"non_streaming,omitempty"`

	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty" yaml:"top_p,omitempty"`
	TopK        *int     `json:"top_k,omitempty" yaml:"top_k,omitempty"`

	PercentileMetrics []string           `json:"percentile_metrics,omitempty" yaml:"percentile_metrics,omitempty"` // default ttft,tpot,itl
	MetricPercentiles []float64          `json:"metric_percentiles,omitempty" yaml:"metric_percentiles,omitempty"` // default 99
	Goodput           map[string]float64 `json:"goodput,omitempty" yaml:"goodput,omitempty"`                       // SLO ms by ttft, tpot, e2el
	Metadata          map[string]string  `json:"metadata,omitempty" yaml:"metadata,omitempty"`

	// Synthetic model (inproc backend, when Model names a shape instead of a file).
	SyntheticType string `json:"synthetic_type,omitempty" yaml:"synthetic_type,omitempty"`
	Threads       int    `json:"threads,omitempty" yaml:"threads,omitempty"`

	// Engine configures the in-process engine of the inproc backend.
	Engine EngineSpec `json:"engine,omitzero" yaml:"engine,omitempty"`

	// EnergyDevice names the device whose energy the result counts (serve-bench's
	// --energy-device): "cpu" (RAPL package energy), "gpu" (every GPU), "gpu:N" or
	// "none". Empty: the CPU for the inproc backend (the engine computes there), none
	// for an external server, whose device only the user knows.
	EnergyDevice string `json:"energy_device,omitempty" yaml:"energy_device,omitempty"`

	RequestOptions `yaml:",inline"`
}

// RequestOptions are vllm bench serve's request shaping options beyond temperature,
// top-p and top-k: more sampling parameters, extra body members, request ids, TLS and
// the timeline plot.
type RequestOptions struct {
	MinP              *float64 `json:"min_p,omitempty" yaml:"min_p,omitempty"`
	FrequencyPenalty  *float64 `json:"frequency_penalty,omitempty" yaml:"frequency_penalty,omitempty"`
	PresencePenalty   *float64 `json:"presence_penalty,omitempty" yaml:"presence_penalty,omitempty"`
	RepetitionPenalty *float64 `json:"repetition_penalty,omitempty" yaml:"repetition_penalty,omitempty"`
	// Logprobs asks for that many log-probabilities per token (--logprobs).
	Logprobs *int `json:"logprobs,omitempty" yaml:"logprobs,omitempty"`
	// ExtraBody is a JSON object whose members are added to every request body,
	// replacing members of the same name (--extra-body).
	ExtraBody string `json:"extra_body,omitempty" yaml:"extra_body,omitempty"`
	// RequestIDPrefix starts each request's x-request-id header; the request's index
	// follows (--request-id-prefix). Empty: no header.
	RequestIDPrefix string `json:"request_id_prefix,omitempty" yaml:"request_id_prefix,omitempty"`
	// Insecure skips TLS certificate verification of an https server (--insecure).
	Insecure bool `json:"insecure,omitempty" yaml:"insecure,omitempty"`
	// PlotTimeline writes an HTML timeline of the requests next to the result JSON
	// (--plot-timeline), its inter-token gaps coloured by TimelineITLThresholdsMs
	// (two values, default 25 and 50).
	PlotTimeline            bool      `json:"plot_timeline,omitempty" yaml:"plot_timeline,omitempty"`
	TimelineITLThresholdsMs []float64 `json:"timeline_itl_thresholds_ms,omitempty" yaml:"timeline_itl_thresholds_ms,omitempty"`
}

// ValidateRequestOptions reports the first request option out of range, naming its
// flag.
func (o RequestOptions) ValidateRequestOptions() error {
	for _, c := range []struct {
		flag string
		v    *float64
		lo   float64
		hi   float64
	}{{"--min-p", o.MinP, 0, 1}, {"--frequency-penalty", o.FrequencyPenalty, -2, 2}, {"--presence-penalty", o.PresencePenalty, -2, 2},
		{"--repetition-penalty", o.RepetitionPenalty, 0, math.MaxFloat64}} {
		if c.v != nil && (math.IsNaN(*c.v) || *c.v < c.lo || *c.v > c.hi) {
			return fmt.Errorf("%s %v is out of range [%g, %g]", c.flag, *c.v, c.lo, c.hi)
		}
	}
	if o.RepetitionPenalty != nil && *o.RepetitionPenalty == 0 {
		return errors.New("--repetition-penalty must be greater than 0")
	}
	if o.Logprobs != nil && *o.Logprobs < 0 {
		return fmt.Errorf("--logprobs %d is negative", *o.Logprobs)
	}
	if o.ExtraBody != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(o.ExtraBody), &m); err != nil || m == nil {
			return fmt.Errorf("--extra-body: want a JSON object: %s", strings.TrimSpace(o.ExtraBody))
		}
	}
	if t := o.TimelineITLThresholdsMs; len(t) > 0 && (len(t) != 2 || t[0] < 0 || t[1] < t[0]) {
		return fmt.Errorf("--timeline-itl-thresholds %v: want two values in ms, low,high", t)
	}
	return nil
}

// EngineSpec holds the in-process engine's batching and KV cache settings, under the
// names of vLLM's server flags; zero values mean the engine's defaults.
type EngineSpec struct {
	MaxNumSeqs          int `json:"max_num_seqs,omitempty" yaml:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens int `json:"max_num_batched_tokens,omitempty" yaml:"max_num_batched_tokens,omitempty"`
	BlockSize           int `json:"block_size,omitempty" yaml:"block_size,omitempty"` // positions per KV block
	// KVCacheMemory sizes the KV cache pool: bytes ("512MiB", "1GB", "1048576") or a
	// share of the memory available ("30%"); "" = the engine's default.
	KVCacheMemory string `json:"kv_cache_memory,omitempty" yaml:"kv_cache_memory,omitempty"`
	KVCacheType   string `json:"kv_cache_type,omitempty" yaml:"kv_cache_type,omitempty"` // f16, q8_0 or f32
	NoPrefixCache bool   `json:"no_prefix_cache,omitempty" yaml:"no_prefix_cache,omitempty"`
	// Context is the engine's context size in tokens (0 = the model's).
	Context int `json:"context,omitempty" yaml:"context,omitempty"`

	// Draft is the draft model of speculative decoding (llama-server's -md): a GGUF
	// file, builtin:stories260K or a synthetic shape (spec-base-draft, …) in DraftType
	// (default: the model's synthetic type); "" = none. It must share the model's
	// vocabulary. DraftMax, DraftMin and DraftPMin are llama-server's --draft-max,
	// --draft-min and --draft-p-min (0 = the engine's default; p-min < 0 = never stop
	// early).
	Draft     string  `json:"draft,omitempty" yaml:"draft,omitempty"`
	DraftType string  `json:"draft_type,omitempty" yaml:"draft_type,omitempty"`
	DraftMax  int     `json:"draft_max,omitempty" yaml:"draft_max,omitempty"`
	DraftMin  int     `json:"draft_min,omitempty" yaml:"draft_min,omitempty"`
	DraftPMin float64 `json:"draft_p_min,omitempty" yaml:"draft_p_min,omitempty"`
	// SeqContext is one sequence's prompt + output limit in tokens (0 = the engine's).
	SeqContext int `json:"seq_context,omitempty" yaml:"seq_context,omitempty"`
	// RollingWindow keeps each sequence's last RollingWindow positions in the KV cache
	// and attends over them (engine.Options.Window); 0 = the model's own, if any.
	RollingWindow int `json:"rolling_window,omitempty" yaml:"rolling_window,omitempty"`
}

// CheckNonStreaming refuses what a non-streaming run cannot measure: goodput SLOs on
// ttft or tpot (e2el is allowed).
func (s ServeSpec) CheckNonStreaming() error {
	if !s.NonStreaming {
		return nil
	}
	for _, k := range []string{"ttft", "tpot"} {
		if _, ok := s.Goodput[k]; ok {
			return fmt.Errorf("goodput %s: --non-streaming measures no %s (only e2el); give --goodput e2el:MS", k, strings.ToUpper(k))
		}
	}
	return nil
}

// RequestTimeout is RequestTimeoutS as a duration (0: no limit).
func (s ServeSpec) RequestTimeout() time.Duration {
	return time.Duration(s.RequestTimeoutS * float64(time.Second))
}

// ConcurrencyLabel is the point's --max-concurrency as tables print it ("16", "inf").
func (s ServeSpec) ConcurrencyLabel() string {
	if s.MaxConcurrency > 0 {
		return strconv.Itoa(s.MaxConcurrency)
	}
	return "inf"
}

// DefaultServe returns the serve spec every unset key of a profile's serve section
// takes: vllm bench serve's defaults, as serve-bench's flags.
func DefaultServe() ServeSpec {
	return ServeSpec{
		Backend: "inproc",
		Dataset: DatasetSpec{
			Name: "random", NumPrompts: 1000,
			RandomInputLen: 1024, RandomOutputLen: 128,
			SonnetInputLen: 550, SonnetOutputLen: 150, SonnetPrefixLen: 200,
			PrefixRepetitionPrefixLen: 256, PrefixRepetitionSuffixLen: 256,
			PrefixRepetitionNumPrefixes: 10, PrefixRepetitionOutputLen: 128,
			CustomOutputLen: 256,
		},
		RequestRate:       Inf,
		Burstiness:        1,
		RequestTimeoutS:   600,
		PercentileMetrics: []string{"ttft", "tpot", "itl"},
		MetricPercentiles: []float64{99},
		SyntheticType:     "Q4_0",
	}
}

// Datasets lists the dataset names a ServeSpec accepts (vllm bench serve's
// --dataset-name values that llmbench implements).
var Datasets = []string{"sharegpt", "sonnet", "random", "prefix_repetition", "custom"}

// DatasetNeedsFile reports whether the named dataset reads its prompts from
// dataset_path (--dataset-path).
func DatasetNeedsFile(name string) bool {
	return name == "sharegpt" || name == "sonnet" || name == "custom"
}

// KVCacheTypes lists the KV cache element types the in-process engine keeps.
var KVCacheTypes = []string{"f16", "q8_0", "f32"}

// ParseKVCacheMemory reads an engine's kv_cache_memory (--kv-cache-memory): a size
// in bytes ("512MiB", "2GB", "1048576") or a share of the memory available ("30%").
// It returns the bytes, or the share as a fraction (0 to 1]; both 0 for "".
func ParseKVCacheMemory(s string) (bytes int64, fraction float64, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, 0, nil
	}
	if strings.HasSuffix(t, "%") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return 0, 0, fmt.Errorf("%q: want a share between 0 and 100%%", s)
		}
		return 0, v / 100, nil
	}
	v, err := ParseBytes(t)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not a size such as 1GiB or 64MiB, nor a share such as 30%%", s)
	}
	return v, 0, nil
}

// ParseBytes parses a size such as "1GiB", "64MiB", "512M" or "1048576".
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("%q is not a size such as 1GiB or 64MiB", s)
	}
	return int64(v * float64(mult)), nil
}
