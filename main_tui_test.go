package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"llmbench/engine/synth"
	"llmbench/profiles"
	"llmbench/workloads/store"
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
// serve-bench run (200 requests), watched on Live (paused and resumed with space), its
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
	keys("Down", "Down", "BSpace", "BSpace", "BSpace", "2", "0", "0")
	waitFor("Estimated: 1 point × 200 requests", 5*time.Second)
	keys("Enter")
	// The requests may all be served before a poll sees Live (20 took a quarter second
	// on a 2-core AMD EPYC): Results then shows, and Live keeps the run's last frame.
	s = waitEither(tm, 30*time.Second, "requests ·", "Serving Benchmark Result")
	back := false
	if !strings.Contains(s, "requests ·") {
		keys("BTab")
		s, back = waitFor("requests ·", 5*time.Second), true
	}
	if !strings.Contains(s, "serve-bench") {
		t.Errorf("Live does not say serve-bench:\n%s", s)
	}
	if !strings.Contains(s, "✓ done") { // still running: pause and resume the view
		shows(s, "space pause")
		keys("Space")
		// The run may end between the screen read and the key (Results then shows).
		s = waitEither(tm, 5*time.Second, "view paused", "Serving Benchmark Result")
		if strings.Contains(s, "view paused") {
			if !strings.Contains(s, "✓") {
				shows(s, "space resume")
			}
			keys("Space")
		}
	}
	if back {
		keys("Tab")
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

// waitEither returns the screen once it shows one of whats, failing the test after d.
func waitEither(tm *term, d time.Duration, whats ...string) string {
	tm.t.Helper()
	end := time.Now().Add(d)
	for {
		s := tm.screen()
		for _, w := range whats {
			if strings.Contains(s, w) {
				return s
			}
		}
		if time.Now().After(end) {
			tm.t.Fatalf("none of %q on screen after %v:\n%s", whats, d, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// frameOK fails the test when a line outside the TUI's frame stays on screen: the
// header must be the first line and the footer the last, as the TUI draws them (a
// stray write to the terminal scrolls or overwrites them). A capture taken while the
// TUI redraws can hold half of the new frame, so a screen that fails is captured
// again for up to two seconds: a redraw finishes, a stray write stays.
func (tm *term) frameOK(s string, w int) {
	tm.t.Helper()
	end := time.Now().Add(2 * time.Second)
	for {
		fault := frameFault(s, w)
		if fault == "" {
			return
		}
		if time.Now().After(end) {
			tm.t.Fatalf("%s:\n%s", fault, s)
		}
		time.Sleep(50 * time.Millisecond)
		s = tm.screen()
	}
}

// frameFault says what is wrong with screen s's frame (frameOK), "" when nothing is.
func frameFault(s string, w int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], " llmbench ") || !strings.Contains(lines[0], "[") {
		return "the header is not the first line"
	}
	foot := lines[len(lines)-1]
	if !strings.Contains(foot, "quit") && !strings.Contains(foot, "close help") {
		return "the footer is not the last line"
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			return fmt.Sprintf("line %d is %d cells wide (> %d)", i+1, n, w)
		}
	}
	return ""
}

// TestTUINewUser walks a new user's path (issue 14's acceptance) with only keys the
// screens show, at 120×36: a GGUF file in ~/.cache/llama.cpp is found and picked;
// serve-bench on sharegpt (../shared/datasets), concurrency 1,4, a fake GPU swept at
// 300 and 200 W; Live, then Results (the sweep table, both limits); a second run at
// concurrency 4; c on Results compares it with the first, point c=4 against point
// c=4; then a bench on a synthetic model that is written first. At every step the
// header is the first line and the footer the last (nothing writes outside the TUI).
func TestTUINewUser(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of runs in a terminal")
	}
	// ShareGPT_V3_filtered_500.json: sharegpt_sample_50.json's prompts are all over
	// vLLM's 1024-token filter by this model's tokenizer (median 1945)
	ds, err := filepath.Abs(filepath.Join("..", "shared", "datasets", "ShareGPT_V3_filtered_500.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ds); err != nil {
		t.Skipf("no sharegpt sample beside the repository: %v", err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".cache", "llama.cpp"), 0o755); err != nil {
		t.Fatal(err)
	}
	// a small llama with a 32000-piece vocabulary: sharegpt's prompts fit vLLM's
	// 1024-token filter (the built-in model's 512-piece one counts them too long)
	f, err := os.Create(filepath.Join(home, ".cache", "llama.cpp", "tiny-stories.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := synth.NewSpec("llama-tiny", "Q8_0", synth.DefaultSeed)
	if err == nil {
		err = synth.Write(context.Background(), f, spec, nil)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 120, 36
	tm := startTerm(t, "newuser", w, h, fmt.Sprintf(
		"cd %s && env -u XDG_CACHE_HOME -u XDG_STATE_HOME -u XDG_DATA_HOME -u LLAMA_CACHE -u HF_HOME -u HF_HUB_CACHE -u OLLAMA_MODELS -u LLMBENCH_MODELS "+
			"HOME=%s NO_COLOR=1 LLMBENCH_HOME=%s/store %s tui --device fake; sleep 30", dir, home, dir, binPath))
	keys, waitFor := tm.keys, tm.waitFor
	shows := func(s, key string) {
		t.Helper()
		tm.frameOK(s, w)
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if foot := lines[len(lines)-1]; !strings.Contains(foot, key) {
			t.Fatalf("the footer does not offer %q:\n%s", key, s)
		}
	}
	// step moves the cursor with key until the screen shows want (at most n presses).
	step := func(key, want string, n int) string {
		t.Helper()
		for range n {
			// after each key, give the screen time to show it before the next one
			for end := time.Now().Add(400 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if s := tm.screen(); strings.Contains(s, want) {
					return s
				}
			}
			keys(key)
		}
		return waitFor(want, 5*time.Second)
	}

	// 1. Setup lists the file found in llama.cpp's cache; space picks it.
	s := waitFor("Estimated:", 10*time.Second)
	if !strings.Contains(s, "tiny-stories.gguf") || !strings.Contains(s, "llama.cpp") {
		t.Fatalf("the model in ~/.cache/llama.cpp is not listed:\n%s", s)
	}
	shows(s, "↑↓ move")
	s = step("Down", "> ( ) tiny-stories.gguf", 4)
	shows(s, "space pick")
	keys("Space")
	waitFor("(•) tiny-stories.gguf", 5*time.Second)

	// 2. serve-bench, sharegpt from ../shared/datasets, 8 prompts of 16 tokens.
	s = step("Down", "> kind", 3)
	shows(s, "←→ change")
	keys("Right")
	waitFor("◂ serve-bench ▸", 5*time.Second)
	keys("Down")
	s = step("Left", "◂ sharegpt ▸", 3)
	keys("Down")
	s = waitFor("> dataset file", 5*time.Second)
	shows(s, "ctrl+u clear")
	keys("C-u")
	tm.keys("-l", ds)
	keys("Down")
	s = waitFor("> prompts", 5*time.Second)
	keys("C-u", "8", "Down")
	waitFor("> output len", 5*time.Second)
	keys("C-u", "1", "6", "Down")
	s = waitFor("> concurrency", 5*time.Second)
	shows(s, "enter run")
	keys("C-u")
	tm.keys("-l", "1,4")
	s = step("Down", "> power W", 8)
	if !strings.Contains(s, "200–700 W, default 700") {
		t.Errorf("the fake GPU's power range is not on Setup:\n%s", s)
	}
	tm.keys("-l", "300,200")
	s = waitFor("Estimated: 2 points × 8 requests × 2 power limits", 5*time.Second)
	shows(s, "enter run")

	// 3. Live, then Results with both limits and both concurrencies.
	keys("Enter")
	s = waitFor("[Live]", 10*time.Second)
	tm.frameOK(s, w)
	s = waitFor("Output tok/s", 30*time.Second)
	tm.frameOK(s, w)
	s = waitEither(tm, 180*time.Second, "Sweep", "✗ failed")
	tm.frameOK(s, w)
	if !strings.Contains(s, "✓ finished") {
		t.Fatalf("the sweep did not finish:\n%s", s)
	}
	for _, want := range []string{"300 W", "200 W", "concurrency", "out tok/s"} {
		if !strings.Contains(s, want) {
			t.Errorf("Results lacks %q:\n%s", want, s)
		}
	}

	// 4. A second run at concurrency 4, no power limit: back to Setup (the cursor is
	// on the power field: it takes keys as text, so ctrl+u, then ↑ to concurrency).
	shows(s, "tab screens")
	keys("BTab", "BTab")
	s = waitFor("[Setup]", 5*time.Second)
	shows(s, "ctrl+u clear")
	keys("C-u")
	s = step("Up", "> concurrency", 8)
	keys("C-u", "4")
	s = waitFor("Estimated: 1 point × 8 requests", 5*time.Second)
	shows(s, "enter run")
	keys("Enter")
	waitFor("[Live]", 10*time.Second)
	s = waitEither(tm, 120*time.Second, "Serving Benchmark Result", "✗ failed")
	tm.frameOK(s, w)
	if !strings.Contains(s, "✓ finished") {
		t.Fatalf("the second run did not finish:\n%s", s)
	}

	// 5. c compares it with the first: the c=4 points meet, at each limit.
	shows(s, "c compare")
	keys("c")
	s = waitFor("[Compare]", 5*time.Second)
	tm.frameOK(s, w)
	if strings.Contains(s, "no metric in common") {
		t.Fatalf("the runs have nothing in common:\n%s", s)
	}
	if !strings.Contains(s, "% against A") {
		t.Errorf("Compare has no %% diff:\n%s", s)
	}
	shows(s, "↑↓ scroll")
	for _, want := range []string{"> c=4 300 W Output tok/s", "> c=4 200 W Output tok/s"} {
		s = step("Down", want, 80)
		tm.frameOK(s, w)
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, want) && (!strings.Contains(l, " %") || strings.Contains(l, " - ")) {
				t.Errorf("c=4 is not compared with c=4: %q", l)
			}
		}
	}

	// 6. A bench on a synthetic model (written first, with its size on Setup): the
	// screen before, while and after it is written holds nothing but the TUI.
	keys("Tab", "Tab")
	s = waitFor("[Setup]", 5*time.Second)
	keys("C-u")
	s = step("Up", "> kind", 20)
	keys("Left")
	waitFor("◂ bench ▸", 5*time.Second)
	s = step("Up", "> ( ) synthetic ◂", 8) // up into the model list
	s = step("Left", "synthetic ◂ llama-tiny ▸", 12)
	keys("Space")
	s = waitFor("to write", 5*time.Second)
	tm.frameOK(s, w)
	keys("Enter")
	waitFor("[Live]", 10*time.Second)
	s = waitEither(tm, 180*time.Second, "✓ finished", "✗ failed")
	tm.frameOK(s, w)
	if !strings.Contains(s, "✓ finished") || !strings.Contains(s, "llama-tiny") {
		t.Errorf("Results of the synthetic run:\n%s", s)
	}
	keys("q")
}

// TestTUIKernels drives a kernel suite through the workbench in tmux (120×36): kernels
// chosen on Setup with small sizes typed (S=256, one head of 32, blocks of 64, two
// masks, one round), Live lists the cases and shows the latest section, Results shows
// both masks' tables and block-mask pictures, the run is in the store (History lists
// it), q quits.
func TestTUIKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("a kernel suite in a terminal")
	}
	dir := t.TempDir()
	tm := startTerm(t, "kernels", 120, 36,
		fmt.Sprintf("cd %s && env NO_COLOR=1 LLMBENCH_HOME=%s/home %s tui --device none; sleep 30", dir, dir, binPath))
	keys, waitFor := tm.keys, tm.waitFor
	waitFor("Estimated:", 10*time.Second)
	for range 4 { // built-in, synthetic, type, path: then the workload row
		keys("Down")
	}
	keys("Right", "Right")
	waitFor("◂ kernels ▸", 5*time.Second)
	// suite, then cases, seq len, heads, head dim, block size, threads, repetitions
	set := func(v string) { keys("Down", "C-u"); keys(strings.Split(v, "")...) }
	keys("Down")
	for _, v := range []string{"causal,sliding_window", "256", "1", "32", "64", "0", "1"} {
		set(v)
	}
	s := waitFor("Estimated: 2 cases × 1 rep", 5*time.Second)
	if !strings.Contains(s, "◂ attention-masks ▸") {
		t.Fatalf("Setup:\n%s", s)
	}
	keys("Enter")
	s = waitFor("[Live]", 10*time.Second)
	if !strings.Contains(s, "Cases (") {
		t.Errorf("Live lacks the cases panel:\n%s", s)
	}
	s = waitFor("✓ finished", 120*time.Second)
	keys("Down", "Down", "Down", "Down", "Down", "Down", "Down", "Down", "Down", "Down") // to the second mask
	s2 := waitFor("Sliding Window 1024", 5*time.Second)
	if strings.Contains(s, "more columns") {
		t.Errorf("Results offers more columns where everything fits:\n%s", s)
	}
	for _, want := range []string{"Correctness check passed", "| block-sparse", "sparsity="} {
		if !strings.Contains(s+s2, want) {
			t.Errorf("Results lack %q:\n%s\n%s", want, s, s2)
		}
	}
	keys("Tab", "Tab")
	s = waitFor("[History]", 5*time.Second)
	if !strings.Contains(s, "kernels") {
		t.Errorf("History does not list the kernels run:\n%s", s)
	}
	keys("q")
	st, err := store.OpenStore(filepath.Join(dir, "home"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.List()
	if err != nil || len(runs) != 1 || runs[0].Kind != "kernels" || runs[0].Status != store.Done || runs[0].Partial {
		t.Errorf("store: %+v %v", runs, err)
	}
}
