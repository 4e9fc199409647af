// Package profiles holds what llmbench keeps on disk: profile files (YAML, a
// versioned schema of one run or a list of runs), the built-in profiles that
// reproduce the classic experiments, and the results store (every run, its
// environment and its raw samples).
package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"llmbench/engine/builtin"
	"llmbench/workloads"
	"llmbench/workloads/serving"
)

// SchemaVersion is the version of the profile format this build writes and reads.
const SchemaVersion = 1

// BuiltinModel names the built-in model (stories260K) in a bench spec.
const BuiltinModel = "builtin:" + builtin.Name

// Profile is a named list of runs. A file holds either "runs:" (a list) or the keys
// of one run at the top level (its name is then the profile's).
type Profile struct {
	// Schema is the format version (SchemaVersion); a file without one is read as 1.
	Schema      int    `yaml:"schema"`
	Name        string `yaml:"name,omitempty"`
	Description string `yaml:"description,omitempty"`
	Runs        []Run  `yaml:"runs"`
}

// singleRunFile is the layout of a file that holds one run without "runs:".
type singleRunFile struct {
	Schema      int    `yaml:"schema"`
	Description string `yaml:"description,omitempty"`
	Run         `yaml:",inline"`
}

// Run is one experiment of a profile: a llama-bench style bench or a serving
// benchmark, with its sweep and the telemetry it runs under.
type Run struct {
	Name  string               `yaml:"name,omitempty"`
	Bench *workloads.BenchSpec `yaml:"bench,omitempty"`
	Serve *workloads.ServeSpec `yaml:"serve,omitempty"`
	// Sweep lists the serving points (the cross product of its lists); empty lists
	// keep the serve spec's single value.
	Sweep *Sweep `yaml:"sweep,omitempty"`
	// Device picks the GPUs for telemetry and power limits: auto, nvml, fake or none
	// (empty = auto).
	Device string `yaml:"device,omitempty"`
	// PowerLimitW runs everything at each GPU power limit in watts, restoring the
	// original limit afterwards.
	PowerLimitW []float64 `yaml:"power_limit_w,omitempty"`
}

// Sweep is the serving sweep of a run, as serve-bench's comma lists.
type Sweep struct {
	RequestRate    []workloads.Rate `yaml:"request_rate,omitempty"`
	MaxConcurrency []int            `yaml:"max_concurrency,omitempty"`
}

// Kind returns "bench" or "serve-bench".
func (r Run) Kind() string {
	if r.Bench != nil {
		return "bench"
	}
	return "serve-bench"
}

// Points returns the serving points of a serve run: the spec at every
// (concurrency, rate) of the sweep, concurrency outermost as serve-bench runs them
// (the rate is inf under a ramp-up, which sets it).
func (r Run) Points() []workloads.ServeSpec {
	if r.Serve == nil {
		return nil
	}
	concs, rates := []int{r.Serve.MaxConcurrency}, []workloads.Rate{r.Serve.RequestRate}
	if r.Sweep != nil {
		if len(r.Sweep.MaxConcurrency) > 0 {
			concs = r.Sweep.MaxConcurrency
		}
		if len(r.Sweep.RequestRate) > 0 {
			rates = r.Sweep.RequestRate
		}
	}
	var out []workloads.ServeSpec
	for _, c := range concs {
		for _, rt := range rates {
			p := *r.Serve
			p.MaxConcurrency, p.RequestRate = c, rt
			if p.RampUpStrategy != "" {
				p.RequestRate = workloads.Inf // the ramp sets the rate
			}
			out = append(out, p)
		}
	}
	return out
}

// Title names the run for humans: its name, else what it runs ("bench · llama-tiny
// Q4_0", "serve-bench · builtin · sharegpt").
func (r Run) Title() string {
	if r.Name != "" {
		return r.Name
	}
	if r.Bench != nil {
		return "bench · " + runModel(r)
	}
	return "serve-bench · " + runModel(r) + " · " + r.Serve.Dataset.Name
}

// DefaultServe returns the serve spec every unset key of a profile's serve section
// takes: vllm bench serve's defaults, as serve-bench's flags.
func DefaultServe() workloads.ServeSpec {
	return workloads.ServeSpec{
		Backend: "inproc",
		Dataset: workloads.DatasetSpec{
			Name: "random", NumPrompts: 1000,
			RandomInputLen: 1024, RandomOutputLen: 128,
			SonnetInputLen: 550, SonnetOutputLen: 150, SonnetPrefixLen: 200,
			PrefixRepetitionPrefixLen: 256, PrefixRepetitionSuffixLen: 256,
			PrefixRepetitionNumPrefixes: 10, PrefixRepetitionOutputLen: 128,
			CustomOutputLen: 256,
		},
		RequestRate:       workloads.Inf,
		Burstiness:        1,
		RequestTimeoutS:   600,
		PercentileMetrics: []string{"ttft", "tpot", "itl"},
		MetricPercentiles: []float64{99},
		SyntheticType:     "Q4_0",
	}
}

// FromBench returns a profile of one bench run.
func FromBench(name string, spec workloads.BenchSpec) Profile {
	return Profile{Schema: SchemaVersion, Name: name, Runs: []Run{{Name: name, Bench: &spec}}}
}

// FromServe returns a profile of one serving run; give concurrencies or rates to
// sweep them (nil keeps the spec's own value).
func FromServe(name string, spec workloads.ServeSpec, concurrencies []int, rates []workloads.Rate) Profile {
	r := Run{Name: name, Serve: &spec}
	if len(concurrencies) > 0 || len(rates) > 0 {
		r.Sweep = &Sweep{MaxConcurrency: concurrencies, RequestRate: rates}
	}
	return Profile{Schema: SchemaVersion, Name: name, Runs: []Run{r}}
}

// Save writes p to path as YAML (the "runs:" form, schema set), atomically: a
// reader sees the old file or the new one, never half of one.
func Save(path string, p Profile) error {
	data, err := Marshal(p)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

// Marshal returns p as YAML in the "runs:" form with the schema set.
func Marshal(p Profile) ([]byte, error) {
	p.Schema = SchemaVersion
	if len(p.Runs) == 0 {
		return nil, errors.New("profile: no run to save")
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return b.Bytes(), nil
}

// LoadFile reads and checks a profile file; errors are one line naming the file and
// the line.
func LoadFile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

// Parse reads a profile from data; name is the file name the errors cite
// ("profile.yaml:7: unknown key …"). Every unset serve key takes DefaultServe's
// value; a single-run file comes back as a one-element Runs.
func Parse(name string, data []byte) (*Profile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s:%s", name, rewordYAML(err))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty profile", name)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: a profile is a mapping of keys (schema, runs, bench, serve, …)", name, root.Line)
	}
	var p Profile
	if valueOf(root, "runs") != nil {
		for _, k := range []string{"bench", "serve"} {
			if valueOf(root, k) != nil {
				return nil, fmt.Errorf("%s:%d: give either runs: or one run's keys at the top level, not both", name, keyLine(root, k))
			}
		}
		if err := checkNode(root, profileType, ""); err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		if err := root.Decode(&p); err != nil {
			return nil, fmt.Errorf("%s:%s", name, rewordYAML(err))
		}
	} else {
		if err := checkNode(root, singleRunType, ""); err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		var one singleRunFile
		if err := root.Decode(&one); err != nil {
			return nil, fmt.Errorf("%s:%s", name, rewordYAML(err))
		}
		p = Profile{Schema: one.Schema, Name: one.Name, Description: one.Description, Runs: []Run{one.Run}}
	}
	// Serve sections decode again over the defaults, so unset keys keep them.
	runNodes := runNodes(root)
	if len(p.Runs) == 0 {
		return nil, fmt.Errorf("%s:%d: runs: lists no run", name, keyLine(root, "runs"))
	}
	if p.Schema == 0 {
		p.Schema = 1
	}
	if p.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s:%d: schema %d is not supported by this build (it reads schema %d)", name, keyLine(root, "schema"), p.Schema, SchemaVersion)
	}
	for i := range p.Runs {
		r := &p.Runs[i]
		n := runNodes[i]
		if sn := valueOf(n, "serve"); sn != nil {
			s := DefaultServe()
			if err := sn.Decode(&s); err != nil {
				return nil, fmt.Errorf("%s:%s", name, rewordYAML(err))
			}
			if s.Dataset.Name == "random" {
				s.IgnoreEOS = true // as serve-bench: random prompts run to their length
			}
			r.Serve = &s
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n.Line, err)
		}
	}
	return &p, nil
}

// check reports the first thing in r that cannot run.
func (r *Run) check() error {
	where := "run"
	if r.Name != "" {
		where = fmt.Sprintf("run %q", r.Name)
	}
	switch {
	case r.Bench == nil && r.Serve == nil:
		return fmt.Errorf("%s: give bench: or serve:", where)
	case r.Bench != nil && r.Serve != nil:
		return fmt.Errorf("%s: give bench: or serve:, not both", where)
	}
	switch r.Device {
	case "", "auto", "nvml", "fake", "none":
	default:
		return fmt.Errorf("%s: device %q is not auto, nvml, fake or none", where, r.Device)
	}
	for _, w := range r.PowerLimitW {
		if !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("%s: power_limit_w %g is not a positive number of watts", where, w)
		}
	}
	if r.Bench != nil {
		if r.Sweep != nil {
			return fmt.Errorf("%s: sweep: is for serve runs; a bench sweeps its own lists (n_prompt, n_threads, …)", where)
		}
		if len(r.Bench.Models) == 0 {
			r.Bench.Models = []workloads.BenchModel{{Path: BuiltinModel}}
		}
		if err := r.Bench.WithDefaults().Validate(); err != nil {
			return fmt.Errorf("%s: bench: %v", where, err)
		}
		return nil
	}
	s := r.Serve
	switch s.Backend {
	case "inproc", "openai", "openai-chat", "tgi", "llamacpp":
	default:
		return fmt.Errorf("%s: serve: backend %q is not inproc, openai, openai-chat, tgi or llamacpp", where, s.Backend)
	}
	if s.Backend != "inproc" && s.BaseURL == "" {
		return fmt.Errorf("%s: serve: backend %s needs base_url", where, s.Backend)
	}
	if s.Dataset.NumPrompts < 1 {
		return fmt.Errorf("%s: serve: dataset num_prompts %d (minimum 1)", where, s.Dataset.NumPrompts)
	}
	for _, p := range r.Points() {
		if !(p.RequestRate > 0) {
			return fmt.Errorf("%s: serve: request_rate %v is not positive", where, p.RequestRate)
		}
		if p.MaxConcurrency < 0 {
			return fmt.Errorf("%s: serve: max_concurrency %d is negative", where, p.MaxConcurrency)
		}
	}
	if !(s.Burstiness > 0) {
		return fmt.Errorf("%s: serve: burstiness %g is not positive", where, s.Burstiness)
	}
	if err := serving.CheckEnergyDevice(s); err != nil {
		return fmt.Errorf("%s: serve: energy_device: %v", where, err)
	}
	return nil
}

// runNodes returns the mapping node of each run: the items of runs:, else the root.
func runNodes(root *yaml.Node) []*yaml.Node {
	if rn := valueOf(root, "runs"); rn != nil && rn.Kind == yaml.SequenceNode && len(rn.Content) > 0 {
		return rn.Content
	}
	return []*yaml.Node{root}
}

// valueOf returns the value node of key in a mapping node, nil when absent.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// keyLine returns the line of key in m, else m's own line.
func keyLine(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return m.Line
}

// ResolveDatasets makes every relative dataset path of p absolute: override, when
// given, replaces every serve run's path; otherwise a relative path is looked up
// in each of dirs in turn (the profile's folder, the working folder, the binary's
// folder and its parents), keeping the first that exists.
func ResolveDatasets(p *Profile, override string, dirs []string) error {
	for i := range p.Runs {
		s := p.Runs[i].Serve
		if s == nil {
			continue
		}
		d := &s.Dataset
		if override != "" {
			d.Path = override
		}
		if d.Path == "" || filepath.IsAbs(d.Path) {
			continue
		}
		found := ""
		for _, dir := range dirs {
			cand := filepath.Join(dir, d.Path)
			if _, err := os.Stat(cand); err == nil {
				found = cand
				break
			}
		}
		if found == "" {
			return fmt.Errorf("dataset %s: not found beside the profile, the working folder or the binary (looked in %s); give --dataset-path FILE",
				d.Path, strings.Join(dirs, ", "))
		}
		d.Path = found
	}
	return nil
}
