package main

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestServeBenchNothingListening: serve-bench against a port nobody listens on fails
// with one line that says what was tried and how to proceed, and keeps no run in the
// store (no request was ever sent).
func TestServeBenchNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // a port that was free a moment ago: connections are refused
	home := filepath.Join(t.TempDir(), "home")
	env := []string{"LLMBENCH_HOME=" + home}
	for _, args := range [][]string{
		{"serve-bench", "--num-prompts", "4", "--port", itoa(port)},                                                   // no --model: /v1/models
		{"serve-bench", "--num-prompts", "4", "--port", itoa(port), "--model", "m", "--ready-check-timeout-sec", "1"}, // the ready check
	} {
		_, stderr, code := runEnv(t, env, args...)
		last := lastLine(stderr)
		if code != 1 || !strings.Contains(last, "127.0.0.1:"+itoa(port)) || !strings.Contains(last, "llmbench serve") || !strings.Contains(last, "--backend inproc") {
			t.Errorf("%v: exit %d, last line %q; want exit 1 and one line naming the address, llmbench serve and --backend inproc", args, code, last)
		}
	}
	out, _, _ := runEnv(t, env, "run", "--history")
	if n := len(strings.Split(strings.TrimSpace(out), "\n")) - 1; n != 0 {
		t.Errorf("%d runs kept that never sent a request:\n%s", n, out)
	}
}

// TestHelpExitsZero: bench --help and serve-bench --help print three example command
// lines first, then the flags grouped (compatible ones, llmbench additions), and exit 0.
func TestHelpExitsZero(t *testing.T) {
	for cmd, groups := range map[string][]string{
		"bench":       {"llama-bench compatible:", "llmbench additions:"},
		"serve-bench": {"vLLM compatible (vllm bench serve):", "llmbench additions:"},
	} {
		out, _, code := run(t, cmd, "--help")
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 4 {
			t.Fatalf("%s --help: exit %d\n%s", cmd, code, out)
		}
		for _, l := range lines[:3] {
			if !strings.HasPrefix(strings.TrimSpace(l), "llmbench "+cmd+" ") {
				t.Errorf("%s --help: %q is not an example command line", cmd, l)
			}
		}
		for _, g := range groups {
			if !strings.Contains(out, "\n"+g+"\n") {
				t.Errorf("%s --help lacks the group %q", cmd, g)
			}
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func itoa(n int) string { return strconv.Itoa(n) }
