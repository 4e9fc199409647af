package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"llmbench/kernels/cpu"
)

// benchArgs is a quick run on the built-in model.
var benchArgs = []string{"bench", "-p", "16", "-n", "8", "-r", "2"}

func TestBenchMarkdown(t *testing.T) {
	out, stderr, code := run(t, benchArgs...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	head := "| model                          |       size |     params | backend    | threads |            test |                  t/s |"
	if len(lines) < 4 || lines[0] != head {
		t.Fatalf("table:\n%s", out)
	}
	for i, name := range []string{"pp16", "tg8"} {
		cells := strings.Split(lines[2+i], "|")
		if len(cells) != 9 || strings.TrimSpace(cells[6]) != name || !strings.Contains(cells[7], " ± ") || strings.TrimSpace(cells[4]) != "CPU" {
			t.Errorf("row %d: %q", i, lines[2+i])
		}
	}
	if !strings.Contains(out, "\nbuild: llmbench") || !strings.Contains(stderr, "bench: [") {
		t.Errorf("footer or progress missing:\n%s\n%s", out, stderr)
	}
}

func TestBenchCrossProduct(t *testing.T) {
	out, stderr, code := run(t, append(benchArgs, "-t", "1,2", "-fa", "0,1", "-r", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "| threads |  fa |") {
		t.Errorf("no fa column:\n%s", out)
	}
	for _, name := range []string{"pp16", "tg8"} {
		if n := strings.Count(out, " "+name+" |"); n != 4 {
			t.Errorf("%s: %d rows; want 4 (-t 1,2 × -fa 0,1)\n%s", name, n, out)
		}
	}
}

func TestBenchFormats(t *testing.T) {
	out, stderr, code := run(t, append(benchArgs, "-o", "json", "-pg", "8,4", "-d", "0,8")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tests []map[string]any
	if err := json.Unmarshal([]byte(out), &tests); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(tests) != 6 {
		t.Fatalf("%d tests; want 3 tests × 2 depths", len(tests))
	}
	for _, k := range []string{"cpu_info", "gpu_info", "backends", "model_type", "test_time", "type_k", "type_v"} {
		if _, ok := tests[0][k].(string); !ok {
			t.Errorf("%s is not a string: %v", k, tests[0][k])
		}
	}
	for _, k := range []string{"model_size", "model_n_params", "n_batch", "n_ubatch", "n_threads", "flash_attn", "n_prompt", "n_gen", "n_depth",
		"avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "peak_rss_bytes", "kv_cache_bytes", "mem_bw_gbs", "gflops"} {
		if _, ok := tests[0][k].(float64); !ok {
			t.Errorf("%s is not a number: %v", k, tests[0][k])
		}
	}
	for _, k := range []string{"samples_ns", "samples_ts"} {
		if s, ok := tests[0][k].([]any); !ok || len(s) != 2 {
			t.Errorf("%s: %v", k, tests[0][k])
		}
	}
	if tests[5]["n_depth"] != 8.0 || tests[5]["n_prompt"] != 8.0 || tests[5]["n_gen"] != 4.0 {
		t.Errorf("last test: %v", tests[5])
	}

	out, _, code = run(t, append(benchArgs, "-o", "jsonl")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("jsonl: exit %d\n%s", code, out)
	}
	for _, l := range lines {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil || o["avg_ts"] == nil {
			t.Errorf("jsonl line %q: %v", l, err)
		}
	}

	out, _, code = run(t, append(benchArgs, "-o", "csv")...)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,model_n_params,n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}

	out, _, code = run(t, append(benchArgs, "-o", "sql")...)
	if code != 0 || !strings.HasPrefix(out, "CREATE TABLE IF NOT EXISTS llama_bench (") {
		t.Fatalf("sql: exit %d\n%s", code, out)
	}
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 is not installed; the SQL output is not loaded")
	}
	cmd := exec.Command(sqlite, ":memory:")
	cmd.Stdin = strings.NewReader(out + "SELECT group_concat(n_prompt || '/' || n_gen), typeof(avg_ts) FROM llama_bench;\n")
	res, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(res)) != "16/0,0/8|real" {
		t.Errorf("sqlite3: %v\n%s", err, res)
	}
}

func TestBenchBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-t", "two"}, "-t"},
		{[]string{"-p", "512-128"}, "-p"},
		{[]string{"-p", "1-16*1"}, "-p"},
		{[]string{"-fa", "2"}, "-fa"},
		{[]string{"-pg", "512"}, "-pg"},
		{[]string{"-o", "xml"}, "-o"},
		{[]string{"-ctk", "q9_9"}, "-ctk"},
		{[]string{"-ctk", "f16", "-ctv", "q8_0"}, "-ctk"},
		{[]string{"-r", "0"}, "-r"},
		{[]string{"-b", "0"}, "-b"},
		{[]string{"--delay", "soon"}, "-delay"},
		{[]string{"--shape", "llama-9000b", "--type", "Q4_0"}, "--shape"},
		{[]string{"--shape", "llama-1b", "--type", "Q3_X"}, "--type"},
		{[]string{"--shape", "llama-1b"}, "--type"},
		{[]string{"-p", "0", "-n", "0"}, "no test"},
		{[]string{"--compare", "a.json"}, "--compare"},
		{[]string{"--nosuch"}, "nosuch"},
		{[]string{"-ctk", "q8_0"}, "-ctv q8_0"},
		{[]string{"-ctk", "q4_0", "-ctv", "q4_0"}, "f16, q8_0, f32"},
		{[]string{"-fa", "maybe"}, "-fa"},
		{[]string{"-hf", "ggml-org/model"}, "-hf"},
		{[]string{"-lm", "dio"}, "-lm dio"},
		{[]string{"-dio", "1"}, "-dio"},
		{[]string{"--poll", "101"}, "--poll"},
		{[]string{"-C", "zz"}, "-C"},
		{[]string{"-sm", "diag"}, "-sm"},
		{[]string{"--prio", "9"}, "prio"},
		{[]string{"--numa", "spread"}, "--numa"},
		{[]string{"-oe", "xml"}, "-oe"},
	}
	for _, c := range cases {
		_, stderr, code := run(t, append([]string{"bench"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want one line naming %q and exit 2", c.args, code, stderr, c.want)
		}
	}
	// A missing model file is refused before anything runs, with one line.
	_, stderr, code := run(t, "bench", "-m", "/nonexistent.gguf", "-p", "4", "-n", "0", "-r", "1")
	if code != 2 || !strings.Contains(stderr, "nonexistent.gguf") || strings.Contains(stderr, "panic") {
		t.Errorf("missing model: exit %d, %q", code, stderr)
	}
}

func TestBenchCompare(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := run(t, append(benchArgs, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a := filepath.Join(dir, "a.json")
	os.WriteFile(a, []byte(out), 0o644)
	out, stderr, code = run(t, "bench", "--compare", a, a)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"pp16", "tg8"} {
		if !strings.Contains(out, "| "+name+" ") {
			t.Errorf("no %s row:\n%s", name, out)
		}
	}
	if n := strings.Count(out, "no significant difference"); n != 2 {
		t.Errorf("self-comparison: %d rows without a significant difference; want 2\n%s", n, out)
	}
	// Two saved runs that differ in threads, B clearly faster.
	write := func(name string, threads int, ts []float64) string {
		var lines []string
		for _, test := range [][2]int{{512, 0}, {0, 128}} {
			o := map[string]any{"model_type": "llama 1B Q4_0", "n_threads": threads, "n_prompt": test[0], "n_gen": test[1], "n_depth": 0, "samples_ts": ts}
			b, _ := json.Marshal(o)
			lines = append(lines, string(b))
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}
	t1 := write("t1.jsonl", 1, []float64{10.1, 9.8, 10.0, 10.2, 9.9})
	t2 := write("t2.jsonl", 2, []float64{19.5, 19.9, 20.3, 20.1, 19.8})
	out, stderr, code = run(t, "bench", "--compare", t1, t2)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "significant: B faster"); n != 2 || !strings.Contains(out, "n_threads: 1 → 2") {
		t.Errorf("-t 1 vs -t 2: %d significant rows; want 2\n%s", n, out)
	}
	_, stderr, code = run(t, "bench", "--compare", t1, filepath.Join(dir, "missing.json"))
	if code != 1 || len(strings.Split(strings.TrimSpace(stderr), "\n")) != 1 {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}

func TestSysinfo(t *testing.T) {
	out, stderr, code := run(t, "sysinfo", "--bw-size", "64MiB", "--bw-probes", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{"cpu:", "features:", "cores:", "read bandwidth:", "GB/s (median of 3 probes summing 64.00 MiB", "kernels:"}
	for _, want := range want {
		if !strings.Contains(out, want) {
			t.Errorf("sysinfo lacks %q:\n%s", want, out)
		}
	}
	// Where the system says (Linux), how much of the probe buffer's mapping (its own,
	// 64 MiB) it held in huge pages.
	if hp := regexp.MustCompile(`buffer in huge pages: \S+ \S+ of the 64.00 MiB mapping that holds it`); runtime.GOOS == "linux" && !hp.MatchString(out) {
		t.Errorf("sysinfo lacks the probe buffer's huge pages:\n%s", out)
	}
	for _, k := range cpu.Kernels() { // every type and phase, with its kernel and reason, in columns
		q := regexp.QuoteMeta
		re := regexp.MustCompile(`\s` + q(k.Type.String()) + ` +` + q(k.Phase) + ` +` + q(k.Kernel) + ` +` + q(k.Detail+"; "+k.Why) + `\n`)
		if !re.MatchString(out) {
			t.Errorf("sysinfo lacks %s %s %s:\n%s", k.Type, k.Phase, k.Kernel, out)
		}
	}
	out, _, code = run(t, "sysinfo", "--bw-size", "8MiB", "--bw-probes", "1", "-o", "json", "-m", "engine/builtin/stories260K.gguf")
	var info map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info["model"] == nil || len(info["kernels"].([]any)) != len(cpu.Kernels()) {
		t.Errorf("sysinfo json: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--bw-size", "lots"}, {"--bw-probes", "0"}, {"-o", "xml"}, {"--shape", "llama-1b"}} {
		_, stderr, code := run(t, append([]string{"sysinfo"}, args...)...)
		if code != 2 || len(strings.Split(strings.TrimSpace(stderr), "\n")) != 1 {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestBenchLlamaBenchCommandLine runs a command line copied from llama-bench with
// every kind of its flags: CPU placement acts, GPU settings are recorded with one
// note, -oe writes the second format on stderr, --progress llama-bench's lines.
func TestBenchLlamaBenchCommandLine(t *testing.T) {
	out, stderr, code := run(t, "bench", "--n_prompt", "16", "-n", "4", "-r", "1", "-ngl", "-1", "-sm", "none", "-mg", "1", "-nkvo", "1",
		"-ts", "3/1", "-ot", "blk=CPU", "-dev", "none", "-embd", "0", "-nopo", "1", "--no-host", "1", "-fitt", "512", "-fitc", "4096",
		"-ncmoe", "2", "-C", "0x1", "--poll", "0", "--prio", "0", "--numa", "numactl", "-mmp", "0", "-fa", "on",
		"-ctk", "f16", "-ctv", "f16", "-o", "json", "-oe", "csv", "--progress", "-v", "--offline", "-hft", "token")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tests []map[string]any
	if err := json.Unmarshal([]byte(out), &tests); err != nil || len(tests) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	want := map[string]any{"n_gpu_layers": -1.0, "split_mode": "none", "main_gpu": 1.0, "no_kv_offload": true, "tensor_split": "3.00/1.00",
		"tensor_buft_overrides": "blk=CPU", "devices": "none", "embeddings": false, "no_op_offload": 1.0, "no_host": true, "fit_target": 512.0,
		"fit_min_ctx": 4096.0, "n_cpu_moe": 2.0, "cpu_mask": "0x1", "cpu_strict": false, "poll": 0.0, "load_mode": "none", "use_mmap": false,
		"flash_attn": 1.0, "type_k": "f16", "type_v": "f16", "n_prompt": 16.0}
	for k, v := range want {
		if tests[0][k] != v {
			t.Errorf("%s = %#v; want %#v", k, tests[0][k], v)
		}
	}
	for _, s := range []string{"build_commit,build_number,", "llama-bench: benchmark 1/2: starting", "llama-bench: benchmark 2/2: generation run 1/1",
		"no effect on the CPU engine", "load mode none", "CPUs 0"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
	if n := strings.Count(stderr, "no effect on the CPU engine"); n != 1 {
		t.Errorf("%d notes about GPU flags; want one line", n)
	}
}
