package main

import (
	"fmt"
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

// TestTUIEndToEnd drives `llmbench tui` in a real terminal (tmux): set one repetition
// on the Setup screen, run the bench on the built-in model, land on Results, quit.
func TestTUIEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	sock := fmt.Sprintf("llmbench-test-%d", os.Getpid())
	dir := t.TempDir()
	tmux(t, sock, "new-session", "-d", "-s", "tui", "-x", "100", "-y", "30",
		fmt.Sprintf("cd %s && env NO_COLOR=1 %s tui --device fake; sleep 30", dir, binPath))
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	screen := func() string { return tmux(t, sock, "capture-pane", "-p", "-t", "tui") }
	waitFor := func(what string, d time.Duration) string {
		t.Helper()
		end := time.Now().Add(d)
		for {
			s := screen()
			if strings.Contains(s, what) {
				return s
			}
			if time.Now().After(end) {
				t.Fatalf("no %q on screen after %v:\n%s", what, d, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("Estimated: 2 tests × 5 reps", 10*time.Second)
	// Model rows: built-in, synthetic, type, path; then workload, pp, tg, reps.
	for range 7 {
		tmux(t, sock, "send-keys", "-t", "tui", "Down")
	}
	tmux(t, sock, "send-keys", "-t", "tui", "BSpace", "1")
	waitFor("Estimated: 2 tests × 1 reps", 5*time.Second)
	tmux(t, sock, "send-keys", "-t", "tui", "Enter")
	s := waitFor("✓ finished", 60*time.Second)
	if !strings.Contains(s, "| model") {
		t.Errorf("results screen lacks the llama-bench table:\n%s", s)
	}
	tmux(t, sock, "send-keys", "-t", "tui", "Right") // the table is wider than 100 columns
	s = waitFor("t/s", 5*time.Second)
	for _, want := range []string{"pp512", "tg128"} {
		if !strings.Contains(s, want) {
			t.Errorf("results screen lacks %q:\n%s", want, s)
		}
	}
	tmux(t, sock, "send-keys", "-t", "tui", "q")
	end := time.Now().Add(5 * time.Second)
	for strings.Contains(screen(), "[Results]") { // the pane stays (sleep); the TUI leaves it
		if time.Now().After(end) {
			t.Fatalf("q did not quit:\n%s", screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
