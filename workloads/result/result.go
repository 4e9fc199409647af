// Package result is the persisted result model: the Document of one run (what ran,
// where, what it measured) that the results store keeps and every exporter reads, its
// one-line Summary, and the Environment a run records.
package result

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// Document is one finished (or partial) run as every exporter sees it: what ran, where,
// and what it measured. Exactly one of Bench, Serving, Kernels and Batch is set. The results store
// (workloads/store) keeps the same parts, so an export of a stored run equals the export made
// when it ran.
type Document struct {
	// Title names the run for a human ("bench · llama-1b Q4_0", a profile's name).
	Title string
	// Started is the wall-clock start of the run.
	Started time.Time
	// Env describes the machine and build, as ordered key/value pairs ("cpu", "AMD EPYC
	// 9R14 · 2 threads"), printed as given.
	Env []KV
	// Bench holds a llama-bench style run.
	Bench *micro.Result
	// Serving holds a serve-bench run: one result per sweep point, in sweep order.
	Serving []*serving.Result
	// Kernels holds a kernel benchmark's report.
	Kernels *kernelbench.Report
	// Batch holds a run of TGI's benchmark (`llmbench batch`).
	Batch *micro.BatchResult
	// Throughput holds a JetStream-style throughput run's rows (its serving points,
	// one per row, are in Serving).
	Throughput *Throughput `json:",omitempty"`
	// Partial is set when the run was cancelled or crashed before it finished.
	Partial bool
}

// KV is one labelled value of a Document's environment.
type KV struct {
	Key, Value string
}

// IsPartial reports whether the run, or any part of it, stopped before it finished.
func (d Document) IsPartial() bool {
	if d.Partial {
		return true
	}
	if d.Kernels != nil && d.Kernels.Partial {
		return true
	}
	if d.Batch != nil && d.Batch.Partial {
		return true
	}
	if d.Bench != nil && (d.Bench.Partial || slices.ContainsFunc(d.Bench.Records, func(r micro.Record) bool { return r.Partial })) {
		return true
	}
	return slices.ContainsFunc(d.Serving, func(r *serving.Result) bool { return r.Partial })
}

// EnvValue returns the value of the first Env pair with key, "" when there is none.
func (d Document) EnvValue(key string) string {
	for _, kv := range d.Env {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// Version is llmbench's version as the environment gives it: the "build" value
// ("llmbench v1.2") without the name, else the "version" value.
func (d Document) Version() string {
	if b := d.EnvValue("build"); b != "" {
		return strings.TrimPrefix(b, "llmbench ")
	}
	return d.EnvValue("version")
}

// Summary is the one-line description of a run that a history list shows: what ran,
// on which model, and its headline figure.
type Summary struct {
	Title    string
	Started  time.Time
	Kind     string // "bench", "serve-bench", "kernels", "batch" or "throughput"
	Workload string // "pp512 tg128 ×5", "random ×200 c=8"
	Model    string // the model file without .gguf ("llama-1b-Q4_0"), a model id
	Headline string // "pp512 3216.1 t/s · tg128 312.4 t/s", "412.3 out tok/s"; a failed run's reason
	Partial  bool
	// Failed is set when the run ended with an error (Headline says which); a
	// failed run is also Partial.
	Failed bool `json:",omitempty"`
}

// Summarize describes d in one line's worth of fields.
func Summarize(d Document) Summary {
	s := Summary{Title: d.Title, Started: d.Started, Partial: d.Partial}
	switch {
	case d.Bench != nil:
		s.Kind = "bench"
		var tests, heads []string
		for i := range d.Bench.Records {
			r := &d.Bench.Records[i]
			tests = append(tests, r.Name())
			heads = append(heads, fmt.Sprintf("%s %.1f t/s", r.Name(), r.AvgTs()))
			if s.Model == "" {
				s.Model = strings.TrimSuffix(filepath.Base(r.ModelFilename), ".gguf")
			}
		}
		if s.Model == "" && len(d.Bench.Spec.Models) > 0 {
			s.Model = d.Bench.Spec.Models[0].String()
		}
		s.Workload = strings.Join(tests, " ")
		if d.Bench.Spec.Reps > 0 {
			s.Workload += fmt.Sprintf(" ×%d", d.Bench.Spec.Reps)
		}
		s.Headline = strings.Join(heads, " · ")
		if s.Headline == "" {
			s.Headline = "no test finished"
		}
	case d.Kernels != nil:
		k := d.Kernels.Spec
		s.Kind, s.Model = "kernels", "cpu"
		s.Workload = fmt.Sprintf("%s B=%d H=%d S=%d D=%d", k.Suite, k.Batch, k.Heads, k.SeqLen, k.HeadDim)
		if k.Suite != workloads.SuiteAttentionMasks {
			s.Workload = k.Suite
		}
		s.Headline = d.Kernels.Headline()
	case d.Batch != nil:
		b := d.Batch
		s.Kind, s.Model = "batch", b.Model
		var sizes, heads []string
		for _, p := range b.Points {
			sizes = append(sizes, fmt.Sprint(p.BatchSize))
			if len(p.Runs) > 0 {
				heads = append(heads, fmt.Sprintf("bs%d %.1f ms/tok", p.BatchSize, micro.StatsOf(p.DecodeTokenMs()).Avg))
			}
		}
		s.Workload = fmt.Sprintf("seq %d dec %d bs %s ×%d", b.Spec.SequenceLength, b.Spec.DecodeLength, strings.Join(sizes, ","), b.Spec.Runs)
		s.Headline = strings.Join(heads, " · ")
		if s.Headline == "" {
			s.Headline = "no run finished"
		}
		if b.Approximate {
			s.Headline = "≈ " + s.Headline
		}
	case d.Throughput != nil && len(d.Throughput.Rows) > 0:
		s.Kind = "throughput"
		t := d.Throughput.Spec
		s.Model = d.Throughput.Rows[0].Model
		s.Workload = fmt.Sprintf("sharegpt ×%d b=%d cache %d in %d out %d", t.NumPrompts, t.BatchSize, t.MaxCacheLength, t.MaxInputLength, t.MaxOutputLength)
		var heads []string
		for _, r := range d.Throughput.Rows {
			heads = append(heads, fmt.Sprintf("%s %.1f tok/s", r.Dtype, r.Throughput))
		}
		s.Headline = strings.Join(heads, " · ")
	case len(d.Serving) > 0:
		s.Kind = "serve-bench"
		first := d.Serving[0]
		s.Model = first.ModelID
		var conc []string
		best, at := -1.0, ""
		for _, p := range d.Serving {
			c := p.Spec.ConcurrencyLabel()
			conc = append(conc, c)
			if p.Summary.OutputThroughput > best {
				best, at = p.Summary.OutputThroughput, c
			}
		}
		s.Workload = fmt.Sprintf("%s ×%d c=%s", first.Spec.Dataset.Name, first.Spec.Dataset.NumPrompts, strings.Join(conc, ","))
		s.Headline = fmt.Sprintf("%.1f out tok/s", best)
		if len(d.Serving) > 1 {
			s.Headline = fmt.Sprintf("peak %.1f out tok/s at c=%s", best, at)
		} else if !first.Summary.Measured("ttft") { // --non-streaming: no TTFT
			s.Headline += fmt.Sprintf(" · E2EL mean %.1f ms (non-streaming)", first.Summary.E2EL.Mean)
		} else {
			s.Headline += fmt.Sprintf(" · TTFT mean %.1f ms", first.Summary.TTFT.Mean)
		}
	default:
		s.Kind, s.Headline = "?", "no result"
	}
	return s
}

// Environment describes this machine and build for a record: CPU, Go version, OS,
// the commit when the binary carries one; extra (GPU, driver, build) is appended.
func Environment(extra ...KV) []KV {
	cpu := telemetry.CPUInfo()
	env := []KV{
		{Key: "cpu", Value: fmt.Sprintf("%s · %d threads", cpu.Name(), runtime.NumCPU())},
		{Key: "os", Value: runtime.GOOS + "/" + runtime.GOARCH},
		{Key: "go", Value: runtime.Version()},
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				env = append(env, KV{Key: "commit", Value: s.Value})
			}
		}
	}
	return append(env, extra...)
}

// Stored is a run's document as the results store keeps it under ID ("" when the run
// was not kept): what a job's workload returns.
type Stored struct {
	Doc Document
	ID  string
}

// Throughput is a JetStream-style throughput run: its spec and one row per weights
// type, in JetStream's table's terms, plus the memory each row needed.
type Throughput struct {
	Spec workloads.ThroughputSpec
	Rows []ThroughputRow
}

// ThroughputRow is one row of a throughput run.
type ThroughputRow struct {
	Date   string // YYYY-MM-DD, the day the row ran
	Device string // the machine ("AMD EPYC 9R14 · 2 threads")
	Dtype  string // JetStream's name: "bfloat16", "int8", or "weights / kv"
	Model  string // the model the row ran (its id)
	// Weights and KV are the row's weights type (as llama.cpp names it) and KV cache
	// type.
	Weights, KV                                 string
	BatchSize, CacheLength, MaxInput, MaxOutput int
	// Throughput is output tokens per second over the run's duration.
	Throughput float64
	// Completed and Requests count the requests that finished and those sent.
	Completed, Requests int
	// RollingWindow is the window the engine ran (0: none, the cache held every
	// sequence whole); Rolled counts the sequences that ran past it.
	RollingWindow int
	Rolled        int64
	// WeightBytes is the model's tensor data; KVBytes the KV cache pool the engine
	// allocated for BatchSize sequences of the cache length.
	WeightBytes, KVBytes int64
}

// MemoryBytes is the memory the row needed: weights and KV cache pool.
func (r ThroughputRow) MemoryBytes() int64 { return r.WeightBytes + r.KVBytes }
