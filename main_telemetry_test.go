package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runEnv runs the binary with extra environment variables.
func runEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// fakeLimit reads the fake GPU's persisted limit from the state dir (700 when the
// fake never changed it).
func fakeLimit(t *testing.T, dir string) float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "fake-gpu.json"))
	if os.IsNotExist(err) {
		return 700
	}
	var st struct {
		LimitsW []float64 `json:"limits_w"`
	}
	if err != nil || json.Unmarshal(data, &st) != nil || len(st.LimitsW) == 0 {
		t.Fatalf("fake state: %v %s", err, data)
	}
	return st.LimitsW[0]
}

func TestTelemetryCommand(t *testing.T) {
	env := []string{"LLMBENCH_STATE_DIR=" + t.TempDir()}
	out, stderr, code := runEnv(t, env, "telemetry")
	if code != 0 || !strings.Contains(out, "CPU ") || !strings.Contains(out, "cores · util") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if !strings.Contains(out, "NVML") && !strings.Contains(out, "GPU name") {
		t.Errorf("no word on NVML:\n%s", out)
	}
	out, _, code = runEnv(t, env, "telemetry", "--device", "fake", "--json", "--watch", "-n", "2", "--interval", "50ms")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	var r struct {
		GPUs []struct {
			PowerW float64 `json:"power_w"`
		} `json:"gpus"`
		CPU struct {
			MHz []float64 `json:"mhz"`
		} `json:"cpu"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || len(r.GPUs) != 1 || r.GPUs[0].PowerW < 60 || !strings.Contains(r.Note, "fake") {
		t.Errorf("json %+v %v:\n%s", r, err, lines[1])
	}
	out, _, _ = runEnv(t, env, "telemetry", "--device", "fake")
	for _, want := range []string{"Fake H100", "700 (200–700)", "P0", "SM/mem MHz"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, args := range [][]string{{"telemetry", "--device", "tpu"}, {"telemetry", "--interval", "1ms"}, {"telemetry", "x"}} {
		if _, _, code := runEnv(t, env, args...); code != 2 {
			t.Errorf("%v: exit %d; want 2", args, code)
		}
	}
}

// TestBenchEnergyFields: -o json carries the telemetry summary and energy fields,
// of the CPU engine's device (the CPU, RAPL when readable), whatever GPU is sampled
// beside it; markdown says where the energy came from.
func TestBenchEnergyFields(t *testing.T) {
	dir := t.TempDir()
	env := []string{"LLMBENCH_STATE_DIR=" + dir}
	out, stderr, code := runEnv(t, env, append(benchArgs, "--device", "fake", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var tests []map[string]any
	if err := json.Unmarshal([]byte(out), &tests); err != nil || len(tests) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	for _, k := range []string{"energy_device", "power_source", "gpu_source", "power_min_w", "power_mean_w", "power_max_w", "energy_j", "tokens_per_joule", "telemetry_samples", "sm_clock_mean_mhz", "temp_max_c"} {
		if _, ok := tests[0][k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	if tests[0]["energy_device"] != "cpu" || tests[0]["gpu_source"] != "fake" || tests[0]["power_limit_w"] != nil || tests[0]["telemetry_samples"].(float64) < 2 {
		t.Errorf("pp: %v", tests[0])
	}
	rapl := tests[0]["power_source"] == "rapl"
	for _, k := range []string{"energy_j", "tokens_per_joule", "power_mean_w"} {
		if (tests[0][k] != nil) != rapl {
			t.Errorf("%s = %v with power_source %v", k, tests[0][k], tests[0]["power_source"])
		}
	}
	if tests[0]["sm_clock_mean_mhz"] != nil || tests[0]["temp_max_c"] != nil {
		t.Errorf("GPU figures in the CPU engine's energy: %v %v", tests[0]["sm_clock_mean_mhz"], tests[0]["temp_max_c"])
	}
	out, _, _ = runEnv(t, env, append(benchArgs, "--device", "none")...)
	if !rapl && (strings.Contains(out, "t/J") || !strings.Contains(out, "energy: not measured: CPU package (") || !strings.Contains(out, "telemetry: GPU telemetry off")) {
		t.Errorf("t/J without energy:\n%s", out)
	}
}

// TestBenchPowerSweepFake: every point runs, the table has a power column and the
// two summaries, and the original limit is back afterwards.
func TestBenchPowerSweepFake(t *testing.T) {
	dir := t.TempDir()
	env := []string{"LLMBENCH_STATE_DIR=" + dir}
	out, stderr, code := runEnv(t, env, "bench", "-p", "16", "-n", "8", "-r", "1", "--device", "fake", "--power-limit", "600,450,300")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"600 W", "450 W", "300 W"} {
		if n := strings.Count(out, "|   "+w+" |"); n != 2 {
			t.Errorf("%s: %d rows; want 2\n%s", w, n, out)
		}
		if !strings.Contains(stderr, "power limit "+w+": settled") {
			t.Errorf("no settle line for %s:\n%s", w, stderr)
		}
	}
	// The CPU engine's energy is the CPU's: tokens/J only where RAPL is readable.
	if !strings.Contains(out, "tokens/s vs watts") || !strings.Contains(out, "tokens/J vs watts") || !strings.Contains(out, "   power |") {
		t.Errorf("summaries missing:\n%s", out)
	}
	if !strings.Contains(stderr, "power limits restored (700 W)") || fakeLimit(t, dir) != 700 {
		t.Errorf("not restored: %v W\n%s", fakeLimit(t, dir), stderr)
	}
	if left := powerStateFiles(dir); len(left) > 0 {
		t.Errorf("state files left: %v", left)
	}
	// No NVML (or --device none): one line saying why, nothing runs, nothing changes.
	out, stderr, code = runEnv(t, env, "bench", "-p", "16", "-n", "8", "--device", "none", "--power-limit", "500")
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "nothing changed") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for _, args := range [][]string{{"--power-limit", "abc"}, {"--power-limit", "900"}, {"--device", "tpu"}, {"--sample-interval", "-1s"}} {
		if _, _, code := runEnv(t, env, append([]string{"bench", "--device", "fake"}, args...)...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}

// startSweep starts a slow fake power sweep and waits until the second limit is set.
func startSweep(t *testing.T, dir string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(binPath, "bench", "-p", "16", "-n", "8", "-r", "1", "--delay", "0.4", "--device", "fake", "--power-limit", "600,400,300")
	cmd.Env = append(os.Environ(), "LLMBENCH_STATE_DIR="+dir)
	var errb strings.Builder
	cmd.Stderr = &syncWriter{b: &errb}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for fakeLimit(t, dir) != 400 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the sweep never reached 400 W:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, &errb
}

// powerStateFiles lists the power state files in the state dir (one per GPU the
// guard changed, power-limits-KIND-UUID.json, and an older llmbench's
// power-limits.json).
func powerStateFiles(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "power-limits*.json"))
	return m
}

// syncWriter lets the test poll output the command is still writing.
type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestPowerSweepKilled: SIGKILL mid-sweep leaves the limit changed and the state
// file behind; the next start restores the original limit from it. Ctrl-C restores
// at once.
func TestPowerSweepKilled(t *testing.T) {
	dir := t.TempDir()
	cmd, _ := startSweep(t, dir)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if w := fakeLimit(t, dir); w != 400 {
		t.Fatalf("after SIGKILL the fake is at %v W; want 400 (left changed)", w)
	}
	if left := powerStateFiles(dir); len(left) != 1 {
		t.Fatalf("state files after SIGKILL: %v; want the GPU's", left)
	}
	_, stderr, code := runEnv(t, []string{"LLMBENCH_STATE_DIR=" + dir}, "telemetry", "--device", "fake")
	if code != 0 || !strings.Contains(stderr, "restored GPU 0 power limit to 700 W (left at 400 W") || fakeLimit(t, dir) != 700 {
		t.Errorf("next start: exit %d, limit %v, stderr %s", code, fakeLimit(t, dir), stderr)
	}
	if left := powerStateFiles(dir); len(left) > 0 {
		t.Errorf("state files left after the restore: %v", left)
	}

	dir = t.TempDir()
	cmd, errb := startSweep(t, dir)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("Ctrl-C exit: %v", err)
	}
	if fakeLimit(t, dir) != 700 || !strings.Contains(errb.String(), "power limits restored (700 W)") {
		t.Errorf("Ctrl-C: limit %v W\n%s", fakeLimit(t, dir), errb.String())
	}
}
