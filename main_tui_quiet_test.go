//go:build linux

package main

import (
	"context"
	"io"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/result"
	runcore "llmbench/workloads/run"
)

// TestTUIRunWritesNothingToTheTerminal (issue 14 item 1): while the TUI is up only the
// TUI may write to the terminal. A run started the way Setup starts one (tuiStarter:
// the job layer, with a synthetic model written first and a serve-bench on it) is
// run with file descriptors 1 and 2 pointed at a pipe: every message it has (the
// synthetic model's size, free disk and path, the warm-up, the telemetry line) must
// reach the run's events, and not one byte the pipe.
func TestTUIRunWritesNothingToTheTerminal(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // a cold synthetic cache: the model is written
	dev, st := workbenchParts(t)
	c := setup.Config{Kind: setup.Serve, Model: workloads.BenchModel{Shape: "llama-tiny", Type: "Q8_0"}, Dataset: "random",
		Prompts: 3, InputLen: 16, OutputLen: 4, Concurrency: []int{1, 2}, Rate: []float64{math.Inf(1)}}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := [2]int{}
	for i, fd := range []int{1, 2} {
		if saved[i], err = syscall.Dup(fd); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Dup3(int(w.Fd()), fd, 0); err != nil {
			t.Fatal(err)
		}
	}
	restore := func() {
		for i, fd := range []int{1, 2} {
			syscall.Dup3(saved[i], fd, 0)
			syscall.Close(saved[i])
		}
		w.Close()
	}
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r); got <- b }()

	var logs []string
	var done runcore.Done
	func() {
		defer restore()
		wl, _, opts, err := tuiStarter(dev, st)(c)
		if err != nil {
			t.Error(err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		_, events := runcore.Start(ctx, wl, opts...)
		for ev := range events {
			switch e := ev.(type) {
			case runcore.Log:
				logs = append(logs, e.Text)
			case runcore.Done:
				done = e
			}
		}
	}()
	if out := <-got; len(out) > 0 {
		t.Errorf("the run wrote %d bytes to the terminal:\n%s", len(out), out)
	}
	if s, ok := done.Result.(*result.Stored); !ok || done.Err != nil {
		t.Fatalf("run: %+v", done)
	} else if len(s.Doc.Serving) != 2 {
		t.Errorf("%d sweep points", len(s.Doc.Serving))
	}
	found := false
	for _, l := range logs {
		if strings.Contains(l, "synthetic model") {
			found = true
		}
	}
	if !found {
		t.Errorf("the synthetic model's messages did not reach the run's log: %q", logs)
	}
}
