// Package profiles holds profile files (YAML, a versioned schema of one run or a
// list of runs, each a workloads.Job) and the built-in profiles that reproduce the
// classic experiments.
package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"llmbench/workloads"
	"llmbench/workloads/store"
)

// SchemaVersion is the version of the profile format this build writes and reads
// (the results store keeps each run's job in it).
const SchemaVersion = store.ProfileSchema

// BuiltinModel names the built-in model (stories260K) in a bench spec.
const BuiltinModel = workloads.BuiltinModel

// Profile is a named list of runs. A file holds either "runs:" (a list) or the keys
// of one run at the top level (its name is then the profile's).
type Profile struct {
	// Schema is the format version (SchemaVersion); a file without one is read as 1.
	Schema      int    `yaml:"schema"`
	Name        string `yaml:"name,omitempty"`
	Description string `yaml:"description,omitempty"`
	Runs        []Run  `yaml:"runs"`
	// Compare, when "ab" (CompareAB), prints after the runs the A/B table of the first
	// serve run against the second (report.ServeAB), one per sweep point they share.
	Compare string `yaml:"compare,omitempty"`

	// file and nodes remember where each run came from (the file name errors cite,
	// each run's YAML node), so checks after Parse can name the line; unset for a
	// profile built in code.
	file  string
	nodes []*yaml.Node
}

// singleRunFile is the layout of a file that holds one run without "runs:".
type singleRunFile struct {
	Schema      int    `yaml:"schema"`
	Description string `yaml:"description,omitempty"`
	Run         `yaml:",inline"`
}

// Run is one experiment of a profile: the job spec workloads/jobs runs.
type Run = workloads.Job

// Sweep is the serving sweep of a run, as serve-bench's comma lists.
type Sweep = workloads.Sweep

// FromBench returns a profile of one bench run.
func FromBench(name string, spec workloads.BenchSpec) Profile {
	return Profile{Schema: SchemaVersion, Name: name, Runs: []Run{{Name: name, Bench: &spec}}}
}

// FromBatch returns a profile of one run of TGI's benchmark.
func FromBatch(name string, spec workloads.BatchSpec) Profile {
	return Profile{Schema: SchemaVersion, Name: name, Runs: []Run{{Name: name, Batch: &spec}}}
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
	return store.WriteFileAtomic(path, data)
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
		return nil, syntaxError(name, data, err)
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
		for _, k := range []string{"bench", "serve", "kernels"} {
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
			s := workloads.DefaultServe()
			if err := sn.Decode(&s); err != nil {
				return nil, fmt.Errorf("%s:%s", name, rewordYAML(err))
			}
			if s.Dataset.Name == "random" {
				s.IgnoreEOS = true // as serve-bench: random prompts run to their length
			}
			r.Serve = &s
		}
		if prob := runCheck(r); prob != nil {
			return nil, runError(name, n, r, prob)
		}
	}
	if err := p.checkCompare(); err != nil {
		return nil, fmt.Errorf("%s:%d: compare: %w", name, keyLine(root, "compare"), err)
	}
	p.file, p.nodes = name, runNodes
	return &p, nil
}

// CompareAB is Profile.Compare's A/B table of two serve runs.
const CompareAB = "ab"

// checkCompare checks Compare against the runs.
func (p *Profile) checkCompare() error {
	switch p.Compare {
	case "":
		return nil
	case CompareAB:
		if len(p.Runs) != 2 || p.Runs[0].Serve == nil || p.Runs[1].Serve == nil {
			return fmt.Errorf("%q needs exactly two serve runs (A and B)", p.Compare)
		}
		return nil
	}
	return fmt.Errorf("%q is not %s", p.Compare, CompareAB)
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

// ResolveDatasets makes every relative dataset path of p absolute and checks the
// files the runs will open: override, when given, replaces every serve run's
// dataset path; otherwise a relative path is looked up in each of dirs in turn (the
// profile's folder, the working folder, the binary's folder and its parents),
// keeping the first that exists. A dataset that needs a file and names none, a
// dataset or model file that does not exist, is one line naming the profile's file
// and line.
func ResolveDatasets(p *Profile, override string, dirs []string) error {
	for i := range p.Runs {
		r := &p.Runs[i]
		var node *yaml.Node
		if i < len(p.nodes) {
			node = p.nodes[i]
		}
		// resolve makes one dataset path absolute (key names it in errors).
		resolve := func(path *string, key string) error {
			if override != "" {
				*path = override
			}
			if *path != "" && !filepath.IsAbs(*path) {
				found := ""
				for _, dir := range dirs {
					cand := filepath.Join(dir, *path)
					if _, err := os.Stat(cand); err == nil {
						found = cand
						break
					}
				}
				if found == "" {
					return runError(p.file, node, r, bad(key,
						"dataset %s: not found beside the profile, the working folder or the binary (looked in %s); give --dataset-path FILE",
						*path, strings.Join(dirs, ", ")))
				}
				*path = found
			} else if *path != "" {
				if fi, err := os.Stat(*path); err != nil || fi.IsDir() {
					return runError(p.file, node, r, bad(key, "dataset file %s not found", *path))
				}
			}
			return nil
		}
		if s := r.Serve; s != nil {
			if err := resolve(&s.Dataset.Path, "serve.dataset.dataset_path"); err != nil {
				return err
			}
		}
		if t := r.Throughput; t != nil {
			if err := resolve(&t.DatasetPath, "throughput.dataset_path"); err != nil {
				return err
			}
		}
		if prob := runCheckFiles(r); prob != nil {
			return runError(p.file, node, r, prob)
		}
	}
	return nil
}

// Stored returns the profile a run of the results store keeps, to run it again.
func Stored(s *store.Store, id string) (*Profile, error) {
	b, err := s.ProfileYAML(id)
	if err != nil {
		return nil, err
	}
	return Parse(id+"/meta.json", b)
}
