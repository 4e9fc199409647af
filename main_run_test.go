package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/store"
)

// homeEnv returns a fresh results store for one test, as the environment a run gets.
func homeEnv(t *testing.T) (string, []string) {
	t.Helper()
	home := t.TempDir()
	return home, []string{"LLMBENCH_HOME=" + home}
}

func TestRunList(t *testing.T) {
	out, stderr, code := run(t, "run", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, n := range []string{"builtin:power-sweep", "builtin:quant-compare", "builtin:sharegpt-concurrency"} {
		if !strings.Contains(out, n) {
			t.Errorf("%s not listed:\n%s", n, out)
		}
	}
	out, _, code = run(t, "run", "--show", "builtin:quant-compare")
	if code != 0 || !strings.Contains(out, "Q4_K_M") || !strings.Contains(out, "schema: 1") {
		t.Errorf("--show: exit %d\n%s", code, out)
	}
}

// TestRunBadProfiles: a misspelt key or a bad value is one line naming the file, the
// line and the key, with exit status 2 and nothing run.
func TestRunBadProfiles(t *testing.T) {
	home, env := homeEnv(t)
	dir := t.TempDir()
	cases := []struct{ name, yaml, want string }{
		{"typo.yaml", "schema: 1\nname: typo\nserve:\n  backend: inproc\n  concurency: 4\n",
			`llmbench run: typo.yaml:5: unknown key "concurency" in serve (did you mean "max_concurrency"?)`},
		{"value.yaml", "bench:\n  n_gen: [8]\n  repetitions: twice\n",
			`llmbench run: value.yaml:3: bad value "twice" for "bench.repetitions" (want an integer)`},
		{"missing.yaml", "serve:\n  dataset: {dataset_name: sharegpt, dataset_path: nowhere/x.json}\n",
			`llmbench run: missing.yaml:2: run: serve.dataset.dataset_path: dataset nowhere/x.json: not found`},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runEnv(t, env, "run", path, "--headless")
		if code != 2 || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want one line starting %q", c.name, code, stderr, c.want)
		}
	}
	for _, args := range [][]string{{"run"}, {"run", "builtin:nope"}, {"run", "a.yaml", "b.yaml"}, {"run", "builtin:power-sweep", "--export", "x.txt"}} {
		if _, stderr, code := runEnv(t, env, args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "runs")); len(ents) != 0 {
		t.Errorf("a refused profile left %d runs in the store", len(ents))
	}
}

// TestRunProfileHeadless replays a two-run profile (bench, serve sweep) headless,
// exporting every format; each run is kept in the store as done.
func TestRunProfileHeadless(t *testing.T) {
	home, env := homeEnv(t)
	dir := t.TempDir()
	prof := `schema: 1
name: mini
runs:
  - name: b
    bench: {n_prompt: [16], n_gen: [8], repetitions: 2}
  - name: s
    serve:
      dataset: {dataset_name: random, num_prompts: 4, random_input_len: 16, random_output_len: 8}
    sweep: {max_concurrency: [1, 2]}
`
	path := filepath.Join(dir, "mini.yaml")
	os.WriteFile(path, []byte(prof), 0o644)
	var exports []string
	for _, ext := range []string{"md", "csv", "json", "html"} {
		exports = append(exports, filepath.Join(dir, "out."+ext))
	}
	out, stderr, code := runEnv(t, env, "run", path, "--headless", "--export", strings.Join(exports, ","))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "| pp16 |") && !strings.Contains(out, " pp16 |") || !strings.Contains(out, "Serving Benchmark Result") {
		t.Errorf("stdout lacks the bench table or the serving block:\n%s", out)
	}
	// Not a terminal: plain progress lines, no carriage returns.
	if strings.Contains(stderr, "\r") || !strings.Contains(stderr, "serve-bench: 4/4 requests") {
		t.Errorf("progress on a pipe:\n%q", stderr)
	}
	for _, run := range []string{"b", "s"} {
		for _, ext := range []string{"md", "csv", "json", "html"} {
			p := filepath.Join(dir, "out-"+run+"."+ext)
			b, err := os.ReadFile(p)
			if err != nil || len(b) == 0 {
				t.Errorf("export %s: %v", p, err)
				continue
			}
			if ext == "json" && !json.Valid(b) {
				t.Errorf("%s is not JSON", p)
			}
		}
	}
	s, list := storedRuns(t, home, 2)
	for _, e := range list {
		if e.Status != store.Done {
			t.Errorf("%s: %s", e.ID, e.Status)
		}
	}
	doc, err := s.Load(list[0].ID) // newest: the serve sweep
	if err != nil || len(doc.Serving) != 2 || doc.Serving[1].Summary.Completed != 4 || len(doc.Env) == 0 {
		t.Errorf("stored serve run: %+v %v", doc, err)
	}
	hist, _, _ := runEnv(t, env, "run", "--history")
	if strings.Count(hist, " done ") != 2 {
		t.Errorf("history:\n%s", hist)
	}
	// store:ID runs a kept run again.
	if out, stderr, code := runEnv(t, env, "run", "store:"+list[1].ID); code != 0 || !strings.Contains(out, "tg8") {
		t.Errorf("run store:%s: exit %d\n%s\n%s", list[1].ID, code, out, stderr)
	}
	if _, stderr, code := runEnv(t, env, "run", "store:nope"); code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("run store:nope: exit %d %q", code, stderr)
	}
	if list, _ := s.List(); len(list) != 3 || list[0].Kind != "bench" {
		t.Errorf("after the rerun: %+v", list)
	}
}

// TestBuiltinPowerSweep replays the built-in power sweep on the fake GPU.
func TestBuiltinPowerSweep(t *testing.T) {
	home, env := homeEnv(t)
	env = append(env, "LLMBENCH_STATE_DIR="+t.TempDir())
	out, stderr, code := runEnv(t, env, "run", "builtin:power-sweep", "--headless")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"700 W", "500 W", "300 W"} {
		if !strings.Contains(out, w) {
			t.Errorf("no %s in\n%s", w, out)
		}
	}
	if !strings.Contains(stderr, "power limits restored") {
		t.Errorf("limits not restored:\n%s", stderr)
	}
	s, _ := store.OpenStore(home)
	list, _ := s.List()
	if len(list) != 1 || list[0].Status != store.Done {
		t.Fatalf("store: %+v", list)
	}
	doc, err := s.Load(list[0].ID)
	if err != nil || doc.Bench == nil || len(doc.Bench.Records) != 6 {
		t.Fatalf("stored sweep: %v %+v", err, doc.Bench)
	}
}

// TestExportFlag: bench and serve-bench write --export files beside their own output.
func TestExportFlag(t *testing.T) {
	_, env := homeEnv(t)
	dir := t.TempDir()
	md, js := filepath.Join(dir, "b.md"), filepath.Join(dir, "s.json")
	out, stderr, code := runEnv(t, env, append(benchArgs, "-o", "csv", "--export", md)...)
	if code != 0 || !strings.HasPrefix(out, "build_commit,") {
		t.Fatalf("bench: exit %d, stdout %q\n%s", code, out, stderr)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "pp16") {
		t.Errorf("bench export: %v %s", err, b)
	}
	_, stderr, code = runEnv(t, env, "serve-bench", "--backend", "inproc", "--num-prompts", "3", "--random-input-len", "8",
		"--random-output-len", "4", "--export", js)
	if code != 0 {
		t.Fatalf("serve-bench: exit %d\n%s", code, stderr)
	}
	var doc map[string]any
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &doc) != nil {
		t.Errorf("serve-bench export: %v %s", err, b)
	}
	if _, stderr, code := runEnv(t, env, "serve-bench", "--backend", "inproc", "--export", filepath.Join(dir, "none", "x.md")); code != 2 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("export into a missing folder: exit %d %s", code, stderr)
	}
}

// TestKillMidRunIsPartial: SIGKILL during a run leaves the store readable, the run
// listed as partial with the samples measured before the kill.
func TestKillMidRunIsPartial(t *testing.T) {
	cases := []struct {
		name string
		args []string
		kind string
	}{
		{"bench", []string{"bench", "-p", "64", "-n", "32", "-r", "100000"}, "bench"},
		{"serve-bench", []string{"serve-bench", "--backend", "inproc", "--num-prompts", "100000", "--max-concurrency", "1",
			"--random-input-len", "16", "--random-output-len", "16"}, "serve-bench"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, env := homeEnv(t)
			cmd := exec.Command(binPath, c.args...)
			cmd.Env = append(os.Environ(), env...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			deadline := time.Now().Add(60 * time.Second)
			for {
				matches, _ := filepath.Glob(filepath.Join(home, "runs", "*", "samples.jsonl"))
				if len(matches) == 1 {
					if b, _ := os.ReadFile(matches[0]); bytes.Count(b, []byte("\n")) >= 3 {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("no samples after 60 s; stderr:\n%s", errb.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()
			hist, stderr, code := runEnv(t, env, "run", "--history")
			lines := strings.Split(strings.TrimSpace(hist), "\n")
			if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], " partial ") || !strings.Contains(lines[1], c.kind) {
				t.Fatalf("history after kill -9: exit %d\n%s\n%s", code, hist, stderr)
			}
			s, _ := store.OpenStore(home)
			list, _ := s.List()
			doc, err := s.Load(list[0].ID)
			if err != nil || !doc.Partial {
				t.Fatalf("load: %v partial=%v", err, doc.Partial)
			}
			switch {
			case doc.Bench != nil:
				if len(doc.Bench.Records) == 0 || len(doc.Bench.Records[0].SamplesNs) == 0 {
					t.Errorf("no bench samples survived: %+v", doc.Bench)
				}
			case len(doc.Serving) == 1:
				if doc.Serving[0].Summary.Completed < 1 {
					t.Errorf("no request survived: %+v", doc.Serving[0].Summary)
				}
			default:
				t.Errorf("no result: %+v", doc)
			}
		})
	}
}

// TestTUIWiring: the Setup config saved as a profile reads back as the same run (and
// loads back into Setup as the same config), and
// the store the TUI gets saves, lists, loads and deletes.
func TestTUIWiring(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []setup.Config{
		{Kind: setup.Bench, Model: workloads.BenchModel{Path: setup.Builtin}, Prompt: 32, Gen: 16, Reps: 2, Threads: 1},
		{Kind: setup.Serve, Model: workloads.BenchModel{Shape: "llama-tiny", Type: "Q8_0"}, Dataset: "random", Prompts: 7, Concurrency: []int{3}, Rate: []float64{math.Inf(1)}, InputLen: 128, OutputLen: 64},
		{Kind: setup.Serve, Model: workloads.BenchModel{Path: setup.Builtin}, Dataset: "sharegpt", DatasetPath: "/data/sg.json", Prompts: 7,
			OutputLen: 32, Concurrency: []int{1, 4}, Rate: []float64{math.Inf(1)}, Threads: 2, KVType: "q8_0", MaxNumSeqs: 4, PowerW: []float64{300, 200}},
		{Kind: setup.Serve, Dataset: "random", Prompts: 5, InputLen: 64, OutputLen: 16, Concurrency: []int{4}, Rate: []float64{2, 8},
			Backend: "openai-chat", URL: "http://127.0.0.1:1", Endpoint: "/v1/chat/completions", ServedModel: "qwen"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", c.Kind, len(c.PowerW)+len(c.Rate)))
		if err := profiles.Save(path, tui.ProfileOf(c)); err != nil {
			t.Fatal(err)
		}
		p, err := profiles.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := tui.ConfigOf(p); err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("%s loads into Setup as %+v, %v; want %+v", path, back, err, c)
		}
		r := p.Runs[0]
		switch {
		case c.Kind == setup.Bench:
			if r.Bench == nil || r.Bench.Prompt[0] != 32 || r.Bench.Gen[0] != 16 || r.Bench.Reps != 2 || r.Bench.Models[0].Path != setup.Builtin {
				t.Errorf("bench profile %+v", r.Bench)
			}
		case c.Dataset == "random" && c.Model.Shape != "":
			if s := r.Serve; s == nil || s.Model != "llama-tiny" || s.SyntheticType != "Q8_0" || s.Dataset.NumPrompts != 7 || s.MaxConcurrency != 3 ||
				!s.RequestRate.IsInf() || s.Dataset.RandomInputLen != 128 || !s.IgnoreEOS {
				t.Errorf("serve profile %+v", r.Serve)
			}
		case len(c.PowerW) > 0: // Setup's sweep and power lists are the job's
			if r.Sweep == nil || !slices.Equal(r.Sweep.MaxConcurrency, []int{1, 4}) || !slices.Equal(r.PowerLimitW, []float64{300, 200}) ||
				r.Serve.Dataset.Path != "/data/sg.json" || r.Serve.Engine.KVCacheType != "q8_0" || r.Serve.Engine.MaxNumSeqs != 4 || len(r.Points()) != 2 {
				t.Errorf("sweep profile %+v sweep %+v power %v", r.Serve, r.Sweep, r.PowerLimitW)
			}
		case c.Backend != "":
			if r.Serve.Backend != "openai-chat" || r.Serve.BaseURL != c.URL || r.Serve.Model != "qwen" || len(r.Points()) != 2 ||
				!strings.Contains(r.Name, "qwen") {
				t.Errorf("remote profile %+v (%s)", r.Serve, r.Name)
			}
		}
	}
	s, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts := tuiStore{s}
	res := &micro.Result{Spec: workloads.BenchSpec{Models: []workloads.BenchModel{{Path: setup.Builtin}}, Prompt: []int{8}, Reps: 1},
		Records: []micro.Record{{ModelFilename: "m", NPrompt: 8, SamplesNs: []uint64{1e6}}}}
	id, err := ts.Save(result.Document{Title: "from the tui", Bench: res, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	list, err := ts.List()
	if err != nil || len(list) != 1 || list[0].ID != id || !list[0].Partial || list[0].Kind != "bench" || list[0].Title != "from the tui" {
		t.Fatalf("list %+v %v", list, err)
	}
	doc, err := ts.Load(id)
	if err != nil || len(doc.Env) == 0 || doc.Bench.Records[0].SamplesNs[0] != 1e6 {
		t.Errorf("load %+v %v", doc, err)
	}
	if err := ts.Delete(id); err != nil {
		t.Fatal(err)
	}
	if list, _ := ts.List(); len(list) != 0 {
		t.Errorf("after delete %+v", list)
	}
}
