package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefusesBadProfileValues is the regression test of issue 11 §4 ("validate
// every value before anything runs"): a profile with a bad value (a weight type
// Q4_Z, a dataset name, a KV cache type, a percentile metric, a zero rate, a dataset
// file that does not exist) makes `llmbench run` exit 2 with one line naming the
// file, the line of the bad value and its key, and no run is recorded. Before, the
// Q4_Z profile passed validation, started, recorded a failed run and exited 1.
func TestRunRefusesBadProfileValues(t *testing.T) {
	dir := t.TempDir()
	env := []string{"LLMBENCH_HOME=" + filepath.Join(dir, "home")}
	bench := "name: bad\nbench:\n  n_prompt: [8]\n  n_gen: [4]\n  repetitions: 1\n"
	serve := "name: bad\nserve:\n  backend: inproc\n  dataset:\n    dataset_name: random\n    num_prompts: 2\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"weight type", bench + "  models:\n    - shape: llama-tiny\n      type: Q4_Z\n", `:8: run "bad": bench.models[0].type: unknown type "Q4_Z"`},
		{"shape", bench + "  models:\n    - shape: llama-tinny\n      type: Q4_0\n", `:7: run "bad": bench.models[0].shape: unknown shape "llama-tinny"`},
		{"kv type", bench + "  type_k: [q4_z]\n", `:6: run "bad": bench.type_k[0]: "q4_z" is not a KV cache type`},
		{"dataset name", strings.Replace(serve, "random", "sharegtp", 1), `:5: run "bad": serve.dataset.dataset_name: "sharegtp" is not`},
		{"percentile metric", serve + "  percentile_metrics: [ttft, p99]\n", `:7: run "bad": serve.percentile_metrics[1]: "p99" is not a metric`},
		{"rate", serve + "  request_rate: 0\n", `:7: run "bad": serve.request_rate: 0.0 is not positive`},
		{"engine kv type", serve + "  engine:\n    kv_cache_type: int4\n", `:8: run "bad": serve.engine.kv_cache_type: "int4" is not a KV cache type`},
		{"dataset file", strings.Replace(serve, "random", "sharegpt\n    dataset_path: no-such-file.json", 1),
			`:6: run "bad": serve.dataset.dataset_path: dataset no-such-file.json: not found`},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "bad" + string(rune('a'+i)) + ".yaml"
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runEnv(t, env, "run", "--headless", "--device", "none", path)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, name+c.want) {
				t.Errorf("stderr is not one line naming %s%s:\n%s", name, c.want, stderr)
			}
		})
	}
	hist, stderr, code := runEnv(t, env, "run", "--history")
	if code != 0 {
		t.Fatalf("run --history: exit %d: %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(hist), "\n"); len(lines) > 1 {
		t.Errorf("bad profiles were recorded as runs:\n%s", hist)
	}
}

// TestRunReportsYAMLErrorLine: a key mis-indented on line 7 is reported at line 7,
// with the key it was in (yaml.v3 alone says line 2, where the enclosing block began).
func TestRunReportsYAMLErrorLine(t *testing.T) {
	dir := t.TempDir()
	env := []string{"LLMBENCH_HOME=" + filepath.Join(dir, "home")}
	path := filepath.Join(dir, "indent.yaml")
	yaml := "name: x\n" +
		"serve:\n" +
		"  backend: inproc\n" +
		"  dataset:\n" +
		"    dataset_name: random\n" +
		"    num_prompts: 4\n" +
		"   random_input_len: 8\n" + // line 7: three spaces
		"  max_concurrency: 2\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runEnv(t, env, "run", "--headless", "--device", "none", path)
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "indent.yaml:7:") ||
		!strings.Contains(stderr, `"random_input_len"`) || !strings.Contains(stderr, "serve.dataset") {
		t.Errorf("exit %d, want 2 and one line naming indent.yaml:7, the key and serve.dataset:\n%s", code, stderr)
	}
}
