package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateEveryValue: each bad value of a profile is refused when it is loaded,
// as one line naming the file, the line of the bad value and its key.
func TestValidateEveryValue(t *testing.T) {
	bench := "name: b\nschema: 1\nbench:\n  n_prompt: [8]\n  n_gen: [4]\n"
	serve := "name: s\nschema: 1\nserve:\n  backend: inproc\n  dataset:\n    dataset_name: random\n    num_prompts: 4\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"weight type", bench + "  models:\n    - shape: llama-tiny\n      type: Q4_Z\n",
			`p.yaml:8: run "b": bench.models[0].type: unknown type "Q4_Z" (known: F32,`},
		{"shape", bench + "  models:\n    - {shape: llama-tiny, type: Q4_0}\n    - shape: llama-huge\n      type: Q4_0\n",
			`p.yaml:8: run "b": bench.models[1].shape: unknown shape "llama-huge" (known: `},
		{"shape without type", bench + "  models:\n    - shape: llama-tiny\n",
			`p.yaml:7: run "b": bench.models[0]: synthetic shape llama-tiny has no type`},
		{"type on a file", bench + "  models:\n    - path: m.gguf\n      type: Q4_0\n",
			`p.yaml:8: run "b": bench.models[0].type: type "Q4_0" is for a synthetic shape`},
		{"unknown builtin", bench + "  models:\n    - path: builtin:llama3\n",
			`p.yaml:7: run "b": bench.models[0].path: "builtin:llama3" is not a built-in model`},
		{"kv type", bench + "  type_k: [f16, q4_z]\n", `p.yaml:6: run "b": bench.type_k[1]: "q4_z" is not a KV cache type (f16, q8_0, f32)`},
		{"flash attn", bench + "  flash_attn:\n    - 0\n    - 2\n", `p.yaml:8: run "b": bench.flash_attn[1]: 2 is not 0, 1 or -1 (auto)`},
		{"threads", bench + "  n_threads: [-1]\n", `p.yaml:6: run "b": bench.n_threads[0]: -1 is out of range (minimum 0)`},
		{"repetitions", bench + "  repetitions: -2\n", `p.yaml:6: run "b": bench.repetitions: -2 (minimum 1)`},
		{"power limit", bench + "power_limit_w: [300, -5]\n", `p.yaml:6: run "b": power_limit_w[1]: -5 is not a positive number of watts`},
		{"dataset name", strings.Replace(serve, "random", "randmo", 1),
			`p.yaml:6: run "s": serve.dataset.dataset_name: "randmo" is not sharegpt, sonnet, random, prefix_repetition or custom`},
		{"backend", strings.Replace(serve, "inproc", "vllm", 1), `p.yaml:4: run "s": serve.backend: "vllm" is not inproc, openai, openai-chat, tgi or llamacpp`},
		{"base url", strings.Replace(serve, "inproc", "openai\n  base_url: localhost:8000", 1),
			`p.yaml:5: run "s": serve.base_url: "localhost:8000" is not an http:// or https:// address`},
		{"rate", serve + "  request_rate: 0\n", `p.yaml:8: run "s": serve.request_rate: 0.0 is not positive`},
		{"swept rate", serve + "sweep:\n  request_rate: [1, -2]\n", `p.yaml:9: run "s": sweep.request_rate[1]: -2.0 is not positive`},
		{"swept concurrency", serve + "sweep:\n  max_concurrency:\n    - 1\n    - -4\n", `p.yaml:11: run "s": sweep.max_concurrency[1]: -4 is negative`},
		{"burstiness", serve + "  burstiness: 0\n", `p.yaml:8: run "s": serve.burstiness: 0 is not positive`},
		{"ramp", serve + "  ramp_up_strategy: sideways\n", `p.yaml:8: run "s": serve.ramp_up_strategy: "sideways" is not linear or exponential`},
		{"timeout", serve + "  request_timeout_s: -1\n", `p.yaml:8: run "s": serve.request_timeout_s: -1 is not a number of seconds ≥ 0`},
		{"top_p", serve + "  top_p: 1.5\n", `p.yaml:8: run "s": serve.top_p: 1.5 is not in (0, 1]`},
		{"temperature", serve + "  temperature: -1\n", `p.yaml:8: run "s": serve.temperature: -1 is not ≥ 0`},
		{"percentile metric", serve + "  percentile_metrics: [ttft, ttfb]\n",
			`p.yaml:8: run "s": serve.percentile_metrics[1]: "ttfb" is not a metric (ttft, tpot, itl, e2el,`},
		{"percentile", serve + "  metric_percentiles: [99, 101]\n", `p.yaml:8: run "s": serve.metric_percentiles[1]: 101 is not a percentile in [0, 100]`},
		{"goodput key", serve + "  goodput:\n    ttft: 100\n    latency: 5\n", `p.yaml:10: run "s": serve.goodput.latency: "latency" is not ttft, tpot or e2el`},
		{"non-streaming goodput", serve + "  non_streaming: true\n  goodput:\n    e2el: 500\n    tpot: 20\n", `p.yaml:11: run "s": serve.goodput.tpot: non_streaming measures no tpot (only e2el)`},
		{"non-streaming value", serve + "  non_streaming: maybe\n", `p.yaml:8:`},
		{"synthetic type", serve + "  model: llama-tiny\n  synthetic_type: Q4_Z\n", `p.yaml:9: run "s": serve.synthetic_type: unknown type "Q4_Z"`},
		{"engine kv type", serve + "  engine:\n    kv_cache_type: q4_0\n", `p.yaml:9: run "s": serve.engine.kv_cache_type: "q4_0" is not a KV cache type`},
		{"engine kv memory", serve + "  engine:\n    kv_cache_memory: lots\n", `p.yaml:9: run "s": serve.engine.kv_cache_memory: "lots" is not a size`},
		{"engine seqs", serve + "  engine:\n    max_num_seqs: -1\n", `p.yaml:9: run "s": serve.engine.max_num_seqs: -1 is negative`},
		{"draft settings alone", serve + "  engine:\n    draft_max: 8\n", `p.yaml:8: run "s": serve.engine.draft: draft settings without a draft model`},
		{"draft min", serve + "  engine:\n    draft: spec-base-draft\n    draft_max: 4\n    draft_min: 6\n", `p.yaml:11: run "s": serve.engine.draft_min: 6: want 0 to draft_max`},
		{"draft p-min", serve + "  engine:\n    draft: spec-base-draft\n    draft_p_min: 1.5\n", `p.yaml:10: run "s": serve.engine.draft_p_min: 1.5 is not a probability`},
		{"draft type", serve + "  engine:\n    draft: spec-base-draft\n    draft_type: Q4_Z\n", `p.yaml:10: run "s": serve.engine.draft_type: unknown type "Q4_Z"`},
		{"num prompts", strings.Replace(serve, "num_prompts: 4", "num_prompts: 0", 1), `p.yaml:7: run "s": serve.dataset.num_prompts: 0 (minimum 1)`},
		{"range ratio", serve + "    random_range_ratio: 1.5\n", `p.yaml:8: run "s": serve.dataset.random_range_ratio: 1.5 is not in [0, 1)`},
		{"run in a list", "runs:\n  - name: ok\n    bench: {n_gen: [4]}\n  - name: second\n    serve:\n      dataset:\n        dataset_name: nope\n",
			`p.yaml:7: run "second": serve.dataset.dataset_name: "nope" is not`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Parse:\n got %v\nwant %s…", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// TestValidProfilesStillParse: the values the checks accept.
func TestValidProfilesStillParse(t *testing.T) {
	for _, y := range []string{
		"bench:\n  models:\n    - {shape: llama-tiny, type: q4_k}\n    - path: builtin:stories260K\n  type_k: [f16, q8_0]\n  flash_attn: [0, 1]\n",
		"serve:\n  model: llama-tiny\n  synthetic_type: Q8_0\n  percentile_metrics: [ttft, e2el, client_queue_time]\n  metric_percentiles: [50, 99.9, 100]\n  goodput: {ttft: 200, e2el: 0}\n  engine: {kv_cache_type: q8_0, kv_cache_memory: 30%}\n  top_p: 1\n  top_k: -1\n  temperature: 0\n",
		"serve:\n  ramp_up_strategy: linear\n  ramp_up_start_rps: 0\n  ramp_up_end_rps: 10\n  engine: {kv_cache_memory: 512MiB}\n",
		"serve: {backend: openai, base_url: 'http://127.0.0.1:8000', endpoint: /v1/completions}\n",
		"serve: {backend: tgi, base_url: 'http://127.0.0.1:8000', non_streaming: true, goodput: {e2el: 300}}\n",
	} {
		if _, err := Parse("ok.yaml", []byte(y)); err != nil {
			t.Errorf("%v\n%s", err, y)
		}
	}
	for _, b := range Builtins() {
		if _, err := Builtin(BuiltinPrefix + b.Name); err != nil {
			t.Errorf("built-in %s: %v", b.Name, err)
		}
	}
}

// TestSyntaxErrorLine: a mis-indented key is reported at its own line (yaml.v3 names
// the line where the enclosing block began) with the key it was in.
func TestSyntaxErrorLine(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"key under-indented in a nested mapping",
			"name: x\nserve:\n  backend: inproc\n  dataset:\n    dataset_name: random\n    num_prompts: 4\n   random_input_len: 8\n  max_concurrency: 2\n",
			`p.yaml:7: did not find expected key (in serve): "random_input_len" is indented 3 spaces, but the keys are at other columns (the top level's at 0, serve's at 2, serve.dataset's at 4)`},
		{"key outdented at the top",
			"name: x\nbench:\n  n_gen: [4]\n  n_prompt: [8]\n repetitions: 2\n",
			`p.yaml:5: did not find expected key (at the top level): "repetitions" is indented 1 space`},
		{"list item key",
			"bench:\n  n_gen: [4]\n  models:\n    - shape: llama-tiny\n     type: Q4_0\n",
			`p.yaml:5: did not find expected '-' indicator (in bench): "type" is indented 5 spaces`},
		{"unclosed flow list", "bench:\n  models:\n    - path: a\n      n: [x\n",
			`p.yaml:4: did not find expected ',' or ']' (in bench.models)`},
		{"tab", "bench:\n\tn_gen: [4]\n", `p.yaml:2: found character that cannot start any token (at the top level): YAML indents with spaces, not tabs`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(c.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Parse:\n got %v\nwant %s…", err, c.want)
			}
		})
	}
}

// TestResolveChecksFiles: model files and dataset files the runs will open must
// exist, and a dataset that reads a file must name one; errors cite file and line.
func TestResolveChecksFiles(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.gguf")
	os.WriteFile(model, []byte("x"), 0o644)
	cases := []struct {
		name, yaml, want string
	}{
		{"missing model file", "name: b\nbench:\n  models:\n    - path: " + filepath.Join(dir, "nope.gguf") + "\n",
			`p.yaml:4: run "b": bench.models[0].path: model file ` + filepath.Join(dir, "nope.gguf") + " not found"},
		{"serve model neither file nor shape", "name: s\nserve:\n  model: llama-hug\n",
			`p.yaml:3: run "s": serve.model: "llama-hug" is not a model file nor a synthetic shape`},
		{"sharegpt without a file", "name: s\nserve:\n  dataset:\n    dataset_name: sharegpt\n",
			`p.yaml:3: run "s": serve.dataset.dataset_path: dataset sharegpt reads its prompts from a file`},
		{"dataset not found", "name: s\nserve:\n  dataset:\n    dataset_name: sharegpt\n    dataset_path: no/such.json\n",
			`p.yaml:5: run "s": serve.dataset.dataset_path: dataset no/such.json: not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = ResolveDatasets(p, "", []string{dir})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("ResolveDatasets:\n got %v\nwant %s…", err, c.want)
			}
		})
	}
	p, err := Parse("p.yaml", []byte("bench:\n  models:\n    - path: "+model+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ResolveDatasets(p, "", nil); err != nil {
		t.Errorf("an existing model file: %v", err)
	}
}

// TestNonStreamingKey: serve.non_streaming reaches the run's serve spec, unset is off.
func TestNonStreamingKey(t *testing.T) {
	for y, want := range map[string]bool{"serve: {backend: inproc, non_streaming: true}\n": true, "serve: {backend: inproc}\n": false} {
		p, err := Parse("ns.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Runs[0].Serve.NonStreaming; got != want {
			t.Errorf("%s: non_streaming %v, want %v", y, got, want)
		}
	}
}
