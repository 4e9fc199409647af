package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression tests of issue 11's telemetry defects, through the CLI: energy from the
// device that did the work, fake readings labelled fake, and the power guard across
// processes.

// stateEnv is a private state dir (XDG_STATE_HOME, as telemetry.StateDir reads it)
// and results store; it returns the state dir llmbench uses and the environment.
func stateEnv(t *testing.T) (string, []string) {
	t.Helper()
	xdg := t.TempDir()
	return filepath.Join(xdg, "llmbench"), []string{"LLMBENCH_STATE_DIR=", "XDG_STATE_HOME=" + xdg, "LLMBENCH_HOME=" + t.TempDir()}
}

// TestRegressBenchFakeEnergyIsTheCPUs: `bench --device fake` runs the CPU engine
// beside a fake GPU. Its energy is the CPU's (RAPL) or none, never the GPU's, and
// every output (md, -o json, the json and html exports) says the GPU readings are
// fake. The base commit divided the fake GPU's joules into the CPU engine's tokens
// (power_source "gpu", a t/J column) and said nothing of fake in the table.
func TestRegressBenchFakeEnergyIsTheCPUs(t *testing.T) {
	_, env := stateEnv(t)
	dir := t.TempDir()
	args := []string{"bench", "-p", "16", "-n", "8", "-r", "2", "--device", "fake"}
	out, stderr, code := runEnv(t, env, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tests []map[string]any
	if err := json.Unmarshal([]byte(out), &tests); err != nil || len(tests) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	for _, r := range tests {
		src := r["power_source"]
		if r["energy_device"] != "cpu" || (src != nil && src != "rapl") || (r["energy_j"] != nil) != (src == "rapl") {
			t.Errorf("%v%v: energy_device %v power_source %v energy_j %v; want the CPU's (rapl) or none",
				r["n_prompt"], r["n_gen"], r["energy_device"], src, r["energy_j"])
		}
		if r["gpu_source"] != "fake" {
			t.Errorf("gpu_source %v; want fake", r["gpu_source"])
		}
		if r["energy_j"] == nil && r["energy_note"] == nil {
			t.Error("no energy and no word why")
		}
	}
	md, html, js := filepath.Join(dir, "b.md"), filepath.Join(dir, "b.html"), filepath.Join(dir, "b.json")
	out, stderr, code = runEnv(t, env, append(args, "--export", md+","+html+","+js)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head := strings.SplitN(out, "\n", 2)[0]
	if strings.Contains(head, "| W |") || strings.Contains(head, "|        t/J |") || (strings.Contains(head, "t/J") && !strings.Contains(head, "CPU t/J")) {
		t.Errorf("an energy column that is not the CPU's:\n%s", out)
	}
	if !strings.Contains(out, "energy: ") || !strings.Contains(out, "CPU package") || !strings.Contains(strings.ToLower(out), "fake") {
		t.Errorf("the table does not say where the energy came from and that the GPU is fake:\n%s", out)
	}
	for _, f := range []string{md, html, js} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ToLower(string(b))
		if !strings.Contains(s, "fake") || !strings.Contains(s, "cpu") || strings.Contains(s, `"power_source": "gpu"`) || strings.Contains(s, `"power_source": "fake"`) {
			t.Errorf("%s: says nothing of fake or of the CPU's energy, or counts the GPU's:\n%.2000s", filepath.Base(f), b)
		}
	}
}

// TestRegressServeBenchEnergyDevice: an external server's energy is a GPU's only
// when the user says so (--energy-device gpu:0, or energy_device in a profile), and
// then the fake GPU's readings say fake (vLLM block, JSON power_source "fake"); the
// inproc backend counts the CPU's, never the fake GPU's. The base commit had no
// --energy-device and no energy_device key, and gave every run the GPU's joules.
func TestRegressServeBenchEnergyDevice(t *testing.T) {
	hs := sseServer(t, 0)
	_, env := stateEnv(t)
	dir := t.TempDir()
	common := []string{"serve-bench", "--base-url", hs.URL, "--dataset-name", "random", "--num-prompts", "4",
		"--random-input-len", "8", "--random-output-len", "5", "--device", "fake", "--save-result", "--result-dir", dir}
	out, stderr, code := runEnv(t, env, append(common, "--energy-device", "gpu:0", "--result-filename", "gpu.json")...)
	if code != 0 {
		t.Fatalf("--energy-device gpu:0: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Energy device:") || !strings.Contains(out, "GPU 0, FAKE readings") || !strings.Contains(out, "Output tokens per joule:") {
		t.Errorf("vLLM block:\n%s", out)
	}
	m := readJSON(t, filepath.Join(dir, "gpu.json"))
	if m["power_source"] != "fake" || m["energy_device"] != "gpu:0" || m["energy_j"] == nil {
		t.Errorf("JSON: power_source %v energy_device %v energy_j %v", m["power_source"], m["energy_device"], m["energy_j"])
	}
	// Not named: no energy for the server, and the fake GPU still says fake.
	out, stderr, code = runEnv(t, env, append(common, "--result-filename", "none.json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m = readJSON(t, filepath.Join(dir, "none.json"))
	if m["energy_j"] != nil || m["power_source"] != nil || m["gpu_source"] != "fake" || strings.Contains(out, "Output tokens per joule:") || !strings.Contains(out, "FAKE") {
		t.Errorf("unnamed device: energy_j %v power_source %v gpu_source %v\n%s", m["energy_j"], m["power_source"], m["gpu_source"], out)
	}
	// inproc: the CPU engine's energy is the CPU's; a GPU cannot be named for it.
	_, stderr, code = runEnv(t, env, "serve-bench", "--backend", "inproc", "--num-prompts", "3", "--random-input-len", "8",
		"--random-output-len", "4", "--device", "fake", "--save-result", "--result-dir", dir, "--result-filename", "inproc.json")
	if code != 0 {
		t.Fatalf("inproc: exit %d: %s", code, stderr)
	}
	if m = readJSON(t, filepath.Join(dir, "inproc.json")); m["energy_device"] != "cpu" || (m["power_source"] != nil && m["power_source"] != "rapl") {
		t.Errorf("inproc: energy_device %v power_source %v", m["energy_device"], m["power_source"])
	}
	if _, stderr, code = runEnv(t, env, "serve-bench", "--backend", "inproc", "--energy-device", "gpu:0"); code != 2 || !strings.Contains(stderr, "CPU") {
		t.Errorf("inproc with a GPU energy device: exit %d %s", code, stderr)
	}
	// The profile key.
	prof := filepath.Join(dir, "p.yaml")
	os.WriteFile(prof, []byte(fmt.Sprintf(`schema: 1
name: energy
device: fake
serve:
  backend: openai
  base_url: %s
  energy_device: gpu:0
  dataset: {dataset_name: random, num_prompts: 3, random_input_len: 8, random_output_len: 5}
`, hs.URL)), 0o644)
	exp := filepath.Join(dir, "prof.json")
	out, stderr, code = runEnv(t, env, "run", prof, "--headless", "--export", exp)
	if code != 0 {
		t.Fatalf("profile: exit %d: %s\n%s", code, stderr, out)
	}
	if b, _ := os.ReadFile(exp); !strings.Contains(string(b), `"power_source":"fake"`) && !strings.Contains(string(b), `"power_source": "fake"`) {
		t.Errorf("profile export lacks power_source fake:\n%.3000s", b)
	}
}

// TestRegressConcurrentPowerSweeps: two llmbench processes sweep the fake GPU's limit
// at once. The second refuses with one line naming the first's pid and changes
// nothing; the first restores the limit it found, and no state file is left. On the
// base commit the second saved the first's 300 W as its "original" and, finishing
// last, left the GPU at 300 W with no state file.
func TestRegressConcurrentPowerSweeps(t *testing.T) {
	state, env := stateEnv(t)
	first := exec.Command(binPath, "bench", "-p", "16", "-n", "8", "-r", "1", "--delay", "0.5", "--device", "fake", "--power-limit", "300,400")
	first.Env = append(os.Environ(), env...)
	var errb strings.Builder
	first.Stderr = &syncWriter{b: &errb}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for fakeLimit(t, state) != 300 {
		if time.Now().After(deadline) {
			t.Fatalf("the first sweep never reached 300 W:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The second sweep starts while the first holds 300 W, and would outlast it.
	out, stderr, code := runEnv(t, env, "bench", "-p", "16", "-n", "8", "-r", "1", "--delay", "2", "--device", "fake", "--power-limit", "300,400")
	if err := first.Wait(); err != nil {
		t.Errorf("first sweep: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code == 0 || len(lines) != 1 || !strings.Contains(stderr, fmt.Sprintf("pid %d", first.Process.Pid)) || !strings.Contains(stderr, "nothing changed") {
		t.Errorf("second sweep: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	if w := fakeLimit(t, state); w != 700 {
		t.Errorf("the fake GPU ended at %v W; want 700 (where it started)", w)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "power-limits*.json")); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
	if !strings.Contains(errb.String(), "power limits restored (700 W)") {
		t.Errorf("first sweep did not restore:\n%s", errb.String())
	}
}

// TestRegressTUIDeviceSaysFake: in `llmbench tui --device fake` the Live screen's
// device panel names the device and says FAKE. The base commit titled it "Device"
// and showed the fake GPU's figures as if they were real.
func TestRegressTUIDeviceSaysFake(t *testing.T) {
	dir := t.TempDir()
	tm := startTerm(t, "fake", 100, 30,
		fmt.Sprintf("cd %s && env NO_COLOR=1 LLMBENCH_HOME=%s/home LLMBENCH_STATE_DIR=%s/state %s tui --device fake; sleep 30", dir, dir, dir, binPath))
	tm.waitFor("Estimated: 2 tests × 5 reps", 10*time.Second)
	tm.keys("Enter")
	tm.waitFor("[Live]", 10*time.Second)
	tm.waitFor("✓ finished", 60*time.Second)
	tm.keys("BTab") // back to Live, which keeps the last reading
	tm.waitFor("Device · FAKE · Fake H100", 5*time.Second)
}
