package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNoArgsNotTerminal: `llmbench` alone without a terminal (a pipe, or /dev/null,
// a character device that is no terminal) prints the usage and exits 2, as before.
func TestNoArgsNotTerminal(t *testing.T) {
	out, stderr, code := run(t)
	if code != 2 || out != "" || !strings.HasPrefix(stderr, "usage: llmbench <command>") {
		t.Errorf("pipes: exit %d, stdout %q, stderr %q; want the usage on stderr and exit 2", code, out, stderr)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath)
	var errb strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.HasPrefix(errb.String(), "usage: llmbench") {
		t.Errorf("/dev/null: %v, stderr %q; want the usage and exit 2", err, errb.String())
	}
}

// TestNoArgsTerminal: `llmbench` alone on a terminal opens the workbench on Setup,
// as `llmbench tui` does, and q quits it with status 0.
func TestNoArgsTerminal(t *testing.T) {
	dir := t.TempDir()
	tm := startTerm(t, "noargs", 100, 30,
		fmt.Sprintf("cd %s && env NO_COLOR=1 LLMBENCH_HOME=%s/home %s; echo exit=$?; sleep 30", dir, dir, binPath))
	s := tm.waitFor("[Setup]", 15*time.Second)
	if strings.Contains(s, "usage: llmbench") {
		t.Fatalf("the usage was printed on a terminal:\n%s", s)
	}
	tm.keys("q")
	tm.waitFor("exit=0", 10*time.Second)
}
