package micro

import (
	"math"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/telemetry"
)

// Record is one finished test, with llama-bench's fields (under its JSON names) and
// llmbench's additions.
type Record struct {
	BuildCommit   string `json:"build_commit"`
	BuildNumber   int    `json:"build_number"`
	CPUInfo       string `json:"cpu_info"`
	GPUInfo       string `json:"gpu_info"`
	Backends      string `json:"backends"` // "CPU"
	ModelFilename string `json:"model_filename"`
	ModelType     string `json:"model_type"`     // "llama 1B Q4_0"
	ModelSize     uint64 `json:"model_size"`     // bytes of tensor data
	ModelNParams  uint64 `json:"model_n_params"` // elements of all tensors
	NBatch        int    `json:"n_batch"`
	NUBatch       int    `json:"n_ubatch"`
	NThreads      int    `json:"n_threads"`
	TypeK         string `json:"type_k"`
	TypeV         string `json:"type_v"`
	NGPULayers    int    `json:"n_gpu_layers"`
	FlashAttn     int    `json:"flash_attn"` // 0, 1, or -1 for auto
	// llama-bench's CPU placement (acting) and GPU settings (recorded only).
	CPUMask     string `json:"cpu_mask"`
	CPUStrict   bool   `json:"cpu_strict"`
	Poll        int    `json:"poll"`
	NCPUMoE     int    `json:"n_cpu_moe"`
	SplitMode   string `json:"split_mode"`
	MainGPU     int    `json:"main_gpu"`
	NoKVOffload bool   `json:"no_kv_offload"`
	Devices     string `json:"devices"`
	TensorSplit string `json:"tensor_split"`
	Overrides   string `json:"tensor_buft_overrides"`
	UseMmap     bool   `json:"use_mmap"`
	Embeddings  bool   `json:"embeddings"`
	NoOpOffload int    `json:"no_op_offload"`
	NoHost      bool   `json:"no_host"`
	FitTarget   int    `json:"fit_target"`
	FitMinCtx   int    `json:"fit_min_ctx"`
	NPrompt     int    `json:"n_prompt"`
	NGen        int    `json:"n_gen"`
	NDepth      int    `json:"n_depth"`
	TestTime    string `json:"test_time"` // RFC 3339, UTC, when the test started
	// SamplesNs holds the duration of each repetition in nanoseconds.
	SamplesNs []uint64 `json:"samples_ns"`

	// llmbench's additions.
	BackendImpl string `json:"backend_impl"` // the backend and its kernels per weight type (kernels.ImplName)
	// PeakRSS is the process's peak resident set during the test (bytes; the peak since
	// the process started where the kernel cannot reset it).
	PeakRSS      int64 `json:"peak_rss_bytes"`
	KVCacheBytes int64 `json:"kv_cache_bytes"` // memory of the test's KV cache
	// WeightBytesPerToken is the weight data one generated token reads: every tensor but
	// token_embd (which is only indexed), token_embd included when the output is tied to it.
	WeightBytesPerToken uint64 `json:"weight_bytes_per_token"`
	// FLOPsPerRep is the floating-point work of one repetition (2 per multiply-add:
	// block matmuls per token, the output projection once per forward pass, attention
	// against every cached key).
	FLOPsPerRep float64 `json:"flops_per_rep"`
	// ReadBandwidth is the read bandwidth (bytes per second) around this tg test's
	// repetitions (bench --ceiling), 0 when not measured: BracketMean of
	// ReadBandwidthProbes. A machine's bandwidth drifts with its neighbours' load,
	// within seconds on a shared VM, so each repetition is read against the probes on
	// either side of it.
	ReadBandwidth float64 `json:"read_bandwidth,omitempty"`
	// ReadBandwidthProbes are the probes (bytes per second) taken before each timed
	// repetition and after the last, in order.
	ReadBandwidthProbes []float64 `json:"read_bandwidth_probes,omitempty"`
	Partial             bool      `json:"partial,omitempty"` // interrupted before all repetitions ran
	// PowerLimitW is the GPU power limit the test ran at (--power-limit), 0 when the
	// limit was left as it was.
	PowerLimitW float64 `json:"power_limit_w,omitempty"`
	// Telemetry summarises power and energy over the timed repetitions (nil when no
	// telemetry was sampled).
	Telemetry *telemetry.Power `json:"telemetry,omitempty"`
}

// LoadMode is llama-bench's load_mode of the test: "mmap" or "none" (read into
// memory).
func (r *Record) LoadMode() string {
	if r.UseMmap {
		return "mmap"
	}
	return "none"
}

// EnergyKnown reports whether the test's energy was measured.
func (r *Record) EnergyKnown() bool { return r.Telemetry != nil && r.Telemetry.Known() }

// TokensPerJoule returns the tokens the timed repetitions processed (prompt and
// generated) per joule, 0 when the energy is unknown.
func (r *Record) TokensPerJoule() float64 {
	if !r.EnergyKnown() {
		return 0
	}
	return float64(len(r.SamplesNs)*r.Tokens()) / r.Telemetry.EnergyJ
}

// JoulesPerOutputToken returns the energy of the timed repetitions per generated
// token, 0 when unknown or when the test generates nothing (pp tests).
func (r *Record) JoulesPerOutputToken() float64 {
	if !r.EnergyKnown() || r.NGen == 0 || len(r.SamplesNs) == 0 {
		return 0
	}
	return r.Telemetry.EnergyJ / float64(len(r.SamplesNs)*r.NGen)
}

// Tokens returns the tokens each repetition times (prompt + generated).
func (r *Record) Tokens() int { return r.NPrompt + r.NGen }

// Name returns the test's name ("pp512", "tg128 @ d512").
func (r *Record) Name() string { return TestName(r.NPrompt, r.NGen, r.NDepth) }

// SamplesTs returns tokens per second of each repetition.
func (r *Record) SamplesTs() []float64 {
	out := make([]float64, len(r.SamplesNs))
	for i, ns := range r.SamplesNs {
		out[i] = 1e9 * float64(r.Tokens()) / float64(ns)
	}
	return out
}

func nsFloats(s []uint64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// AvgNs returns the mean repetition time in nanoseconds (truncated, as llama-bench).
func (r *Record) AvgNs() uint64 { return uint64(zeroNaN(metrics.Mean(nsFloats(r.SamplesNs)))) }

// StddevNs returns the sample standard deviation of the repetition times.
func (r *Record) StddevNs() uint64 { return uint64(zeroNaN(metrics.SampleStd(nsFloats(r.SamplesNs)))) }

// AvgTs returns the mean of the per-repetition tokens per second.
func (r *Record) AvgTs() float64 { return zeroNaN(metrics.Mean(r.SamplesTs())) }

// StddevTs returns the sample standard deviation of the per-repetition tokens per
// second (what llama-bench prints after ±).
func (r *Record) StddevTs() float64 { return zeroNaN(metrics.SampleStd(r.SamplesTs())) }

// MemBandwidth returns the achieved weight-read bandwidth of a tg test in bytes per
// second (weight bytes per token × t/s), 0 for tests that process a prompt.
func (r *Record) MemBandwidth() float64 {
	if r.NPrompt != 0 || r.NGen == 0 {
		return 0
	}
	return float64(r.WeightBytesPerToken) * r.AvgTs()
}

// FLOPS returns the achieved floating-point operations per second (mean over reps).
func (r *Record) FLOPS() float64 {
	if len(r.SamplesNs) == 0 {
		return 0
	}
	return r.FLOPsPerRep / (float64(r.AvgNs()) / 1e9)
}

// Ceiling returns the t/s a tg test could reach if reading the weights at bw bytes per
// second were its only cost; 0 when unknown or not a tg test.
func (r *Record) Ceiling(bw float64) float64 {
	if bw <= 0 || r.WeightBytesPerToken == 0 || r.NPrompt != 0 || r.NGen == 0 {
		return 0
	}
	return bw / float64(r.WeightBytesPerToken)
}

// BracketMean is the time-average of probes taken before each of a test's repetitions
// and after the last: each repetition's mean of the probes on either side of it,
// averaged over the repetitions. One probe is its own mean; none is 0.
func BracketMean(probes []float64) float64 {
	switch len(probes) {
	case 0:
		return 0
	case 1:
		return probes[0]
	}
	var s float64
	for i := range len(probes) - 1 {
		s += (probes[i] + probes[i+1]) / 2
	}
	return s / float64(len(probes)-1)
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Result is what a bench run produces: the spec it ran (defaults filled in) and one
// record per finished test, in order.
type Result struct {
	Spec    workloads.BenchSpec `json:"spec"`
	Records []Record            `json:"records"`
	// ReadBandwidth is the machine's measured read bandwidth in bytes per second (the
	// median of the probes run before the tests), 0 when not measured. Each tg test
	// has its own probe too (Record.ReadBandwidth).
	ReadBandwidth float64 `json:"read_bandwidth,omitempty"`
	Partial       bool    `json:"partial,omitempty"` // the run was interrupted
	// TelemetryNote says which devices were sampled or why power was not measured
	// ("NVML found no GPU: …").
	TelemetryNote string `json:"telemetry_note,omitempty"`
}

// RepSnapshot is the live view a bench run publishes after each timed repetition
// (latest wins: a slow consumer may miss some; the Result has them all).
type RepSnapshot struct {
	Test      string // "pp512", "tg128"
	Rep, Reps int
	Tokens    int
	Elapsed   time.Duration
}

// TokensPerSec returns the repetition's throughput.
func (s RepSnapshot) TokensPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Tokens) / s.Elapsed.Seconds()
}
