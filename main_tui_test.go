package main

import (
	"fmt"
	"llmbench/profiles"
	"llmbench/workloads/store"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tmux runs a tmux command on the test's own server socket.
func tmux(t *testing.T, sock string, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// term is a program running in a tmux session of its own, for end-to-end TUI tests.
type term struct {
	t    *testing.T
	sock string
}

// startTerm runs shell in a new w×h tmux session (skipping the test without tmux); the
// session's server is killed when the test ends.
func startTerm(t *testing.T, name string, w, h int, shell string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	tm := &term{t: t, sock: fmt.Sprintf("llmbench-%s-%d", name, os.Getpid())}
	tmux(t, tm.sock, "new-session", "-d", "-s", "tui", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

// screen returns the pane's text.
func (tm *term) screen() string { return tmux(tm.t, tm.sock, "capture-pane", "-p", "-t", "tui") }

// keys sends keys (tmux names: Down, BSpace, Enter…).
func (tm *term) keys(k ...string) {
	tmux(tm.t, tm.sock, append([]string{"send-keys", "-t", "tui"}, k...)...)
}

// waitFor returns the screen once it shows what, failing the test after d.
func (tm *term) waitFor(what string, d time.Duration) string {
	tm.t.Helper()
	end := time.Now().Add(d)
	for {
		s := tm.screen()
		if strings.Contains(s, what) {
			return s
		}
		if time.Now().After(end) {
			tm.t.Fatalf("no %q on screen after %v:\n%s", what, d, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTUIEndToEnd drives `llmbench tui` in a real terminal (tmux) along the key path
// a new user follows with only the keys the screens show (tui/HANDOFF.md): a bench
// run on the built-in model (one repetition), watched on Live, its Results; then a
// serve-bench run (20 requests), watched on Live (paused and resumed with space), its
// Results; c there finds no earlier serve-bench run and opens History with this run
// selected; ↓ space c compares it with the bench run; r on Results runs the
// serve-bench again and c compares the two serve-bench runs; q quits.
func TestTUIEndToEnd(t *testing.T) {
	dir := t.TempDir()
	tm := startTerm(t, "test", 100, 30,
		fmt.Sprintf("cd %s && env NO_COLOR=1 LLMBENCH_HOME=%s/home %s tui --device fake; sleep 30", dir, dir, binPath))
	screen, keys, waitFor := tm.screen, tm.keys, tm.waitFor
	// shows checks that the footer offers a key before the test presses it.
	shows := func(s, key string) {
		t.Helper()
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if foot := lines[len(lines)-1]; !strings.Contains(foot, key) {
			t.Fatalf("the footer does not offer %q:\n%s", key, s)
		}
	}

	// 1. bench: Setup → Live → Results.
	s := waitFor("Estimated: 2 tests × 5 reps", 10*time.Second)
	shows(s, "↑↓ move")
	// Model rows: built-in, synthetic, type, path; then workload, pp, tg, reps.
	for range 7 {
		keys("Down")
	}
	keys("BSpace", "1")
	s = waitFor("Estimated: 2 tests × 1 rep ", 5*time.Second)
	shows(s, "enter run")
	keys("Enter")
	waitFor("[Live]", 10*time.Second)
	s = waitFor("✓ finished", 60*time.Second)
	if !strings.Contains(s, "| model") {
		t.Errorf("results screen lacks the llama-bench table:\n%s", s)
	}
	shows(s, "c compare")
	keys("Right") // the table is wider than 100 columns
	s = waitFor("t/s", 5*time.Second)
	for _, want := range []string{"pp512", "tg128"} {
		if !strings.Contains(s, want) {
			t.Errorf("results screen lacks %q:\n%s", want, s)
		}
	}

	// 2. serve-bench: back to Setup (the focus is still on reps), workload ▸, 20 prompts.
	shows(s, "tab screens")
	keys("BTab", "BTab")
	waitFor("[Setup]", 5*time.Second)
	keys("Up", "Up", "Up", "Right")
	waitFor("◂ serve-bench ▸", 5*time.Second)
	keys("Down", "Down", "BSpace", "BSpace", "BSpace", "2", "0")
	waitFor("Estimated: 1 point × 20 requests", 5*time.Second)
	keys("Enter")
	s = waitFor("requests ·", 30*time.Second)
	if !strings.Contains(s, "serve-bench") {
		t.Errorf("Live does not say serve-bench:\n%s", s)
	}
	if !strings.Contains(s, "✓ done") { // still running: pause and resume the view
		shows(s, "space pause")
		keys("Space")
		s = waitFor("view paused", 5*time.Second)
		if !strings.Contains(s, "✓") {
			shows(s, "space resume")
		}
		keys("Space")
	}
	s = waitFor("Serving Benchmark Result", 60*time.Second)
	if !strings.Contains(s, "✓ finished") {
		t.Errorf("serve-bench did not finish:\n%s", s)
	}

	// 3. compare: c on Results → History (no earlier serve-bench run) → ↓ space c.
	shows(s, "c compare")
	keys("c")
	s = waitFor("no earlier serve-bench run", 5*time.Second)
	shows(s, "space select")
	shows(s, "c compare")
	keys("Down", "Space", "c")
	s = waitFor("[Compare]", 5*time.Second)
	for _, want := range []string{"A  serve-bench · stories260K", "B  bench · stories260K", "no metric in common", "Output tok/s", "Headline metrics"} {
		if !strings.Contains(s, want) {
			t.Errorf("compare screen lacks %q:\n%s", want, s)
		}
	}
	shows(s, "↑↓ scroll")
	for range 30 {
		keys("Down")
	}
	s = waitFor("tg128 t/s", 5*time.Second) // B's own figures, at the end of the table

	// 4. r runs the serve-bench again from Results; c compares the two serve-bench runs.
	keys("BTab")
	s = waitFor("[Results]", 5*time.Second)
	shows(s, "r run again")
	keys("r")
	waitFor("[Live]", 10*time.Second)
	s = waitFor("Serving Benchmark Result", 60*time.Second)
	keys("c")
	s = waitFor("[Compare]", 5*time.Second)
	for _, want := range []string{"% against A", "Mean TTFT (ms)", "TTFT (ms) per request: A ▀ B ▄"} {
		if !strings.Contains(s, want) {
			t.Errorf("compare of two serve-bench runs lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(s, "noise") && !strings.Contains(s, "significant") {
		t.Errorf("no verdict on the mean latencies:\n%s", s)
	}
	shows(s, "? help")
	keys("q")
	end := time.Now().Add(5 * time.Second)
	for strings.Contains(screen(), "[Compare]") { // the pane stays (sleep); the TUI leaves it
		if time.Now().After(end) {
			t.Fatalf("q did not quit:\n%s", screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTUIRunProfile: `llmbench run builtin:power-sweep` on a terminal opens the TUI
// with the profile's run queued: it starts at once, is shown Live (the power sweep's
// messages in the run's log, not on stderr), ends on Results and is kept in the store.
func TestTUIRunProfile(t *testing.T) {
	dir := t.TempDir()
	tm := startTerm(t, "test-run", 120, 40,
		fmt.Sprintf("cd %s && env NO_COLOR=1 LLMBENCH_HOME=%s/home LLMBENCH_STATE_DIR=%s/state %s run builtin:power-sweep 2>%s/stderr; sleep 30", dir, dir, dir, binPath, dir))
	screen, keys, waitFor := tm.screen, tm.keys, tm.waitFor
	s := waitFor("✓ finished", 120*time.Second)
	for _, want := range []string{"[Results]", "power-sweep", "| model", "pp64", "tg32"} {
		if !strings.Contains(s, want) {
			t.Errorf("Results lacks %q:\n%s", want, s)
		}
	}
	keys("BTab")
	s = waitFor("[Live]", 5*time.Second)
	for _, want := range []string{"[1/1] power-sweep", "power limits restored"} {
		if !strings.Contains(s, want) {
			t.Errorf("Live lacks %q:\n%s", want, s)
		}
	}
	keys("q")
	for end := time.Now().Add(5 * time.Second); strings.Contains(screen(), "[Live]"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("q did not quit:\n%s", screen())
		}
	}
	if b, _ := os.ReadFile(dir + "/stderr"); strings.Contains(string(b), "power limit") {
		t.Errorf("power-sweep messages went to stderr:\n%s", b)
	}
	st, err := store.OpenStore(dir + "/home")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := st.List()
	if len(list) != 1 || list[0].Status != store.Done || list[0].Partial {
		t.Fatalf("store: %+v", list)
	}
	doc, err := st.Load(list[0].ID)
	if err != nil || doc.Bench == nil || len(doc.Bench.Records) != 6 {
		t.Fatalf("stored sweep: %v %+v", err, doc.Bench)
	}
	if p, err := profiles.Stored(st, list[0].ID); err != nil || len(p.Runs) != 1 || len(p.Runs[0].PowerLimitW) != 3 {
		t.Errorf("the stored run's profile: %+v %v", p, err)
	}
}
