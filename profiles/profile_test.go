package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/workloads"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"misspelt serve key", "schema: 1\nserve:\n  backend: inproc\n  concurency: 4\n",
			`p.yaml:4: unknown key "concurency" in serve (did you mean "max_concurrency"?)`},
		{"unknown top key", "schema: 1\nbenchh:\n  n_gen: [4]\n",
			`p.yaml:2: unknown key "benchh" at the top level (did you mean "bench"?)`},
		{"far-off key, no suggestion", "bench:\n  zzzzzzzz: 1\n",
			`p.yaml:2: unknown key "zzzzzzzz" in bench`},
		{"nested dataset key", "serve:\n  dataset:\n    num_prompt: 3\n",
			`p.yaml:3: unknown key "num_prompt" in serve.dataset (did you mean "num_prompts"?)`},
		{"key in a list of runs", "runs:\n  - name: a\n    bench:\n      n_gen: [4]\n  - name: b\n    serve:\n      burstyness: 2\n",
			`p.yaml:7: unknown key "burstyness" in serve (did you mean "burstiness"?)`},
		{"compare of one run", "compare: ab\nruns:\n  - name: a\n    serve: {backend: inproc}\n",
			`p.yaml:1: compare: "ab" needs exactly two serve runs (A and B)`},
		{"compare kind", "compare: abc\nruns:\n  - name: a\n    serve: {backend: inproc}\n  - name: b\n    serve: {backend: inproc}\n",
			`p.yaml:1: compare: "abc" is not ab`},
		{"bad int", "bench:\n  repetitions: many\n",
			`p.yaml:2: bad value "many" for "bench.repetitions" (want an integer)`},
		{"bad rate", "serve:\n  request_rate: fast\n",
			`p.yaml:2: bad value "fast" for "serve.request_rate" (want requests per second or inf)`},
		{"list wanted", "bench:\n  n_gen: 4\n",
			`p.yaml:2: "bench.n_gen" wants a list`},
		{"bad list item", "bench:\n  n_gen: [4, x]\n",
			`p.yaml:2: bad value "x" for "bench.n_gen" (want an integer)`},
		{"models item key", "bench:\n  models:\n    - {shape: llama-tiny, typ: Q4_0}\n",
			`p.yaml:3: unknown key "typ" in bench.models (did you mean "type"?)`},
		{"schema", "schema: 2\nbench: {n_gen: [4]}\n", `p.yaml:1: schema 2 is not supported`},
		{"neither", "name: x\n", `p.yaml:1: run "x": give bench:, serve:, kernels:, batch: or throughput:`},
		{"two kinds", "bench: {n_gen: [4]}\nkernels: {suite: attention-masks}\n", "give one of bench:, serve:, kernels:, batch: and throughput:, not several"},
		{"kernels suite", "kernels: {suite: flash}\n", `kernels: suite: "flash" is not one of attention-masks, paged-attention`},
		{"kernels mask", "kernels: {suite: attention-masks, cases: [causal, diagonal]}\n", `kernels: cases: no mask "diagonal"`},
		{"kernels key", "kernels: {suite: attention-masks, seqlen: 4}\n", `unknown key "seqlen" in kernels (did you mean "seq_len"?)`},
		{"kernels sweep", "kernels: {suite: attention-masks}\npower_limit_w: [300]\n", "are for serve and bench runs"},
		{"both forms", "runs:\n  - bench: {n_gen: [4]}\nbench: {n_gen: [4]}\n", "not both"},
		{"bad device", "device: tpu\nbench: {n_gen: [4]}\n", `p.yaml:1: run: device: "tpu" is not auto`},
		{"bad spec", "bench: {n_gen: [4], n_batch: [0]}\n", "p.yaml:1: run: bench.n_batch[0]: 0 is out of range (minimum 1)"},
		{"sweep on bench", "bench: {n_gen: [4]}\nsweep: {max_concurrency: [1]}\n", "sweep: is for serve runs"},
		{"syntax", "bench:\n  n_gen: [4\n", "p.yaml:"},
		{"not a mapping", "- 1\n- 2\n", "p.yaml:1: a profile is a mapping"},
		{"empty", "", "p.yaml: empty profile"},
		{"duplicate key", "bench:\n  n_gen: [4]\n  n_gen: [5]\n", `p.yaml:3:`},
		{"bad concurrency", "serve: {max_concurrency: -1}\n", "p.yaml:1: run: serve.max_concurrency: -1 is negative"},
		{"http without url", "serve: {backend: openai}\n", "needs base_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse: %v\nwant %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "workloads.") {
				t.Errorf("not one plain line: %q", err)
			}
		})
	}
}

func TestParseDefaultsAndForms(t *testing.T) {
	single, err := Parse("s.yaml", []byte("name: one\nserve:\n  dataset: {dataset_name: random, num_prompts: 5}\n  max_concurrency: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(single.Runs) != 1 || single.Runs[0].Name != "one" || single.Schema != SchemaVersion {
		t.Fatalf("runs %+v", single.Runs)
	}
	s := single.Runs[0].Serve
	def := workloads.DefaultServe()
	if s.Dataset.NumPrompts != 5 || s.MaxConcurrency != 2 || !s.RequestRate.IsInf() || s.Burstiness != 1 ||
		s.Dataset.RandomInputLen != def.Dataset.RandomInputLen || !s.IgnoreEOS || s.Backend != "inproc" {
		t.Errorf("defaults not applied: %+v", s)
	}
	list, err := Parse("l.yaml", []byte("runs:\n  - bench: {n_prompt: [8], n_gen: [4], repetitions: 2}\n  - serve: {dataset: {dataset_name: sharegpt}}\n    sweep: {max_concurrency: [1, 4], request_rate: [inf, 2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Runs) != 2 || list.Runs[0].Kind() != "bench" || list.Runs[1].Kind() != "serve-bench" {
		t.Fatalf("runs %+v", list.Runs)
	}
	if m := list.Runs[0].Bench.Models; len(m) != 1 || m[0].Path != BuiltinModel {
		t.Errorf("bench without models: %+v, want the built-in model", m)
	}
	pts := list.Runs[1].Points()
	if len(pts) != 4 || pts[0].MaxConcurrency != 1 || !pts[0].RequestRate.IsInf() || pts[1].RequestRate != 2 || pts[3].MaxConcurrency != 4 {
		t.Errorf("points %+v", pts)
	}
	if list.Runs[1].Serve.IgnoreEOS {
		t.Error("sharegpt got ignore_eos")
	}
}

func TestSaveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	temp := 0.7
	sp := workloads.DefaultServe()
	sp.Dataset.Name, sp.Dataset.NumPrompts, sp.Temperature = "sonnet", 12, &temp
	for _, p := range []Profile{
		FromBench("b", workloads.BenchSpec{Models: []workloads.BenchModel{{Shape: "llama-tiny", Type: "Q8_0"}}, Prompt: []int{16}, Gen: []int{8}, Reps: 2, Threads: []int{1, 2}}),
		FromServe("s", sp, []int{1, 2}, []workloads.Rate{workloads.Inf, 4}),
	} {
		path := filepath.Join(dir, p.Name+".yaml")
		if err := Save(path, p); err != nil {
			t.Fatal(err)
		}
		got, err := LoadFile(path)
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Fatalf("%v\n%s", err, data)
		}
		a, _ := Marshal(*got)
		b, _ := Marshal(p)
		if string(a) != string(b) || got.Runs[0].Title() != p.Runs[0].Title() {
			t.Errorf("round trip:\n got %+v %+v\nwant %+v %+v", got.Runs[0].Bench, got.Runs[0].Serve, p.Runs[0].Bench, p.Runs[0].Serve)
		}
	}
	if err := Save(filepath.Join(dir, "none.yaml"), Profile{}); err == nil {
		t.Error("saved a profile without runs")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left: %v (temporary files must not stay)", ents)
	}
}

func TestBuiltins(t *testing.T) {
	list := Builtins()
	names := map[string]bool{}
	for _, b := range list {
		names[b.Name] = true
		if b.Description == "" {
			t.Errorf("%s: no description", b.Name)
		}
		p, err := Builtin(BuiltinPrefix + b.Name)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		if len(p.Runs) == 0 {
			t.Errorf("%s: no runs", b.Name)
		}
	}
	for _, n := range []string{"attention-masks", "jetstream-throughput", "paged-attention", "power-sweep", "quant-compare", "sharegpt-concurrency", "spec-decode-ab", "tgi-batch"} {
		if !names[n] {
			t.Errorf("built-in %s missing from %v", n, list)
		}
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "quant-compare") {
		t.Errorf("unknown built-in: %v", err)
	}
	if k, _ := Builtin("attention-masks"); k.Runs[0].Kernels == nil || k.Runs[0].Kernels.Suite != "attention-masks" || k.Runs[0].Kind() != "kernels" {
		t.Errorf("attention-masks: %+v", k.Runs[0])
	}
	if tg, _ := Builtin("tgi-batch"); len(tg.Runs) != 2 || tg.Runs[0].Kind() != "batch" || tg.Runs[1].Batch.Threads != 2 ||
		tg.Runs[0].Batch.SequenceLength != 128 || tg.Runs[0].Batch.DecodeLength != 8 || len(tg.Runs[0].Batch.BatchSize) != 6 || tg.Runs[0].Batch.Model.Shape != "llama-1b" {
		t.Errorf("tgi-batch: %+v", tg.Runs)
	}
	p, _ := Builtin("power-sweep")
	if r := p.Runs[0]; r.Device != "fake" || len(r.PowerLimitW) < 2 {
		t.Errorf("power sweep: %+v", r)
	}
	ab, _ := Builtin("spec-decode-ab")
	if a, b := ab.Runs[0].Serve, ab.Runs[1].Serve; ab.Compare != CompareAB || a.Engine.Draft != "" || b.Engine.Draft != "spec-base-draft" ||
		b.Engine.DraftMax != 24 || b.Engine.DraftMin != 1 || b.Engine.DraftPMin != 0.6 || a.Model != b.Model || a.Dataset != b.Dataset {
		t.Errorf("spec-decode-ab: %+v / %+v", a, b)
	}
	if j, _ := Builtin("jetstream-throughput"); j.Runs[0].Kind() != "throughput" || !j.Runs[0].Throughput.RollingWindow() ||
		strings.Join(j.Runs[0].Throughput.WeightsTypes, ",") != "BF16,Q8_0" {
		t.Errorf("jetstream-throughput: %+v", j.Runs[0].Throughput)
	}
	q, _ := Builtin("quant-compare")
	var types []string
	for _, m := range q.Runs[0].Bench.Models {
		types = append(types, m.Type)
	}
	if strings.Join(types, ",") != "Q4_0,Q4_K_M,Q8_0,F16" {
		t.Errorf("quant compare types %v", types)
	}
}

func TestResolveDatasets(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "shared", "datasets"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "shared", "datasets", "d.json")
	os.WriteFile(file, []byte("[]"), 0o644)
	repo := filepath.Join(root, "repo")
	os.Mkdir(repo, 0o755)
	load := func() *Profile {
		p, err := Parse("p", []byte("serve: {dataset: {dataset_name: sharegpt, dataset_path: ../shared/datasets/d.json}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := load()
	if err := ResolveDatasets(p, "", []string{t.TempDir(), repo}); err != nil || p.Runs[0].Serve.Dataset.Path != file {
		t.Errorf("resolved %q, %v; want %s", p.Runs[0].Serve.Dataset.Path, err, file)
	}
	p = load()
	if err := ResolveDatasets(p, "", []string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--dataset-path") {
		t.Errorf("missing dataset: %v", err)
	}
	p = load()
	if err := ResolveDatasets(p, file, nil); err != nil || p.Runs[0].Serve.Dataset.Path != file {
		t.Errorf("override: %q %v", p.Runs[0].Serve.Dataset.Path, err)
	}
	p = load()
	if err := ResolveDatasets(p, "/x/y.json", nil); err == nil || err.Error() != "p:1: run: serve.dataset.dataset_path: dataset file /x/y.json not found" {
		t.Errorf("override that does not exist: %v", err)
	}
}
