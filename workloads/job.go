package workloads

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"llmbench/engine/builtin"
)

// BuiltinModel names the built-in model (stories260K) in a bench spec.
const BuiltinModel = "builtin:" + builtin.Name

// Job is one experiment: a llama-bench style bench, a serving benchmark (with its
// sweep) or a kernel benchmark, and the telemetry it runs under. It is what a profile's run holds, what the
// results store keeps to run it again, and what every front end hands workloads/jobs.
type Job struct {
	Name  string     `yaml:"name,omitempty" json:"name,omitempty"`
	Bench *BenchSpec `yaml:"bench,omitempty" json:"bench,omitempty"`
	Serve *ServeSpec `yaml:"serve,omitempty" json:"serve,omitempty"`
	// Kernels is a kernel benchmark (`llmbench kernels`).
	Kernels *KernelSpec `yaml:"kernels,omitempty" json:"kernels,omitempty"`
	// Batch is TGI's prefill/decode benchmark per batch size (`llmbench batch`).
	Batch *BatchSpec `yaml:"batch,omitempty" json:"batch,omitempty"`
	// Throughput is a JetStream-style throughput run (`llmbench throughput`).
	Throughput *ThroughputSpec `yaml:"throughput,omitempty" json:"throughput,omitempty"`
	// Sweep lists the serving points (the cross product of its lists); empty lists
	// keep the serve spec's single value.
	Sweep *Sweep `yaml:"sweep,omitempty" json:"sweep,omitempty"`
	// Device picks the GPUs for telemetry and power limits: auto, nvml, fake or none
	// (empty = auto).
	Device string `yaml:"device,omitempty" json:"device,omitempty"`
	// PowerLimitW runs everything at each GPU power limit in watts, restoring the
	// original limit afterwards.
	PowerLimitW []float64 `yaml:"power_limit_w,omitempty" json:"power_limit_w,omitempty"`
}

// Sweep is the serving sweep of a job, as serve-bench's comma lists.
type Sweep struct {
	RequestRate    []Rate `yaml:"request_rate,omitempty" json:"request_rate,omitempty"`
	MaxConcurrency []int  `yaml:"max_concurrency,omitempty" json:"max_concurrency,omitempty"`
}

// Kind returns "bench", "kernels", "batch", "throughput" or "serve-bench".
func (j Job) Kind() string {
	switch {
	case j.Bench != nil:
		return "bench"
	case j.Kernels != nil:
		return "kernels"
	case j.Batch != nil:
		return "batch"
	case j.Throughput != nil:
		return "throughput"
	}
	return "serve-bench"
}

// Points returns the serving points of a serve job: the spec at every
// (concurrency, rate) of the sweep, concurrency outermost as serve-bench runs them
// (the rate is inf under a ramp-up, which sets it).
func (j Job) Points() []ServeSpec {
	if j.Serve == nil {
		return nil
	}
	concs, rates := []int{j.Serve.MaxConcurrency}, []Rate{j.Serve.RequestRate}
	if j.Sweep != nil {
		if len(j.Sweep.MaxConcurrency) > 0 {
			concs = j.Sweep.MaxConcurrency
		}
		if len(j.Sweep.RequestRate) > 0 {
			rates = j.Sweep.RequestRate
		}
	}
	var out []ServeSpec
	for _, c := range concs {
		for _, rt := range rates {
			p := *j.Serve
			p.MaxConcurrency, p.RequestRate = c, rt
			if p.RampUpStrategy != "" {
				p.RequestRate = Inf // the ramp sets the rate
			}
			out = append(out, p)
		}
	}
	return out
}

// Title names the job for humans: its name, else what it runs ("bench · llama-tiny
// Q4_0", "serve-bench · builtin · sharegpt").
func (j Job) Title() string {
	if j.Name != "" {
		return j.Name
	}
	if j.Bench != nil {
		return "bench · " + j.ModelNames()
	}
	if j.Kernels != nil {
		return "kernels · " + j.Kernels.Suite
	}
	if j.Batch != nil {
		return "batch · " + j.ModelNames()
	}
	if j.Throughput != nil {
		return "throughput · " + j.ModelNames()
	}
	if j.Serve == nil {
		return "empty job"
	}
	return "serve-bench · " + j.ModelNames() + " · " + j.Serve.Dataset.Name
}

// ModelNames names the model(s) the job's spec asks for, until its result names them
// ("" for a kernel benchmark, which runs no model).
func (j Job) ModelNames() string {
	var ms []string
	add := func(s string) {
		if s != "" && !slices.Contains(ms, s) {
			ms = append(ms, s)
		}
	}
	if j.Bench != nil {
		for _, m := range j.Bench.Models {
			name := filepath.Base(m.Path)
			if m.Shape != "" {
				name = m.Shape + " " + m.Type
			}
			add(name)
		}
	}
	if j.Batch != nil {
		switch m := j.Batch.Model; {
		case j.Batch.Approximate():
			add(cmp.Or(j.Batch.ServerModel, j.Batch.BaseURL))
		case m.Shape != "":
			add(m.Shape + " " + m.Type)
		case m.Path != "":
			add(filepath.Base(m.Path))
		}
	}
	if t := j.Throughput; t != nil {
		switch {
		case t.Model == "" || t.Model == BuiltinModel:
			add("builtin")
		case len(t.WeightsTypes) > 0:
			add(filepath.Base(t.Model) + " " + strings.Join(t.WeightsTypes, ", "))
		default:
			add(filepath.Base(t.Model))
		}
	}
	if j.Serve != nil {
		switch {
		case j.Serve.Backend != "inproc" && j.Serve.Backend != "" && j.Serve.Model == "":
			add(j.Serve.BaseURL) // the server's model, until it says which
		case j.Serve.Model == "":
			add("builtin")
		case j.Serve.Backend == "inproc" && !strings.HasSuffix(j.Serve.Model, ".gguf"):
			add(j.Serve.Model + " " + j.Serve.SyntheticType)
		default:
			add(filepath.Base(j.Serve.Model))
		}
	}
	return strings.Join(ms, ", ")
}
