package engine

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"llmbench/engine/builtin"
)

// greedyText generates gen greedy tokens for each prompt at once on e and returns the
// decoded texts.
func greedyText(t *testing.T, e *Engine, prompts [][]int32, gen int) []string {
	t.Helper()
	var out []string
	for _, toks := range runAll(t, e, prompts, gen) {
		out = append(out, e.Tok.Decode(toks))
	}
	return out
}

// TestPartitionsKeepGreedyText is the end-to-end check: the greedy text of 16
// concurrent requests with the automatic choice (crossover forced to 40 positions,
// partitions of 16, so prompts of 1 to 40 tokens cross it while decoding and long rows
// have up to six partitions) equals the text with partitions forced off and forced on.
func TestPartitionsKeepGreedyText(t *testing.T) {
	const gen = 48
	base := Options{Threads: 2, MaxNumSeqs: 16, MaxNumBatchedTokens: 64, PartitionSize: 16}
	var logits [][]float32 // of one 70-token prompt, to show the paths differ
	run := func(mode PartitionMode, from int) ([]string, PartitionInfo) {
		o := base
		o.Partitions, o.PartitionFrom = mode, from
		e := builtinEngine(t, o)
		defer e.Close()
		s, err := e.NewSession(0)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.Eval(testPrompts(e, 1, 70)[0][:1:1])
		for _, tk := range testPrompts(e, 70, 5) {
			if err == nil {
				l, err = s.Eval(tk[:1])
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		logits = append(logits, slices.Clone(l))
		return greedyText(t, e, testPrompts(e, 16, 3), gen), e.Partitions()
	}
	auto, ai := run(PartitionsAuto, 40)
	off, oi := run(PartitionsOff, 0)
	on, ni := run(PartitionsOn, 0)
	if ai.From != 40 || ai.Mode != PartitionsAuto || oi.Mode != PartitionsOff || ni.Mode != PartitionsOn {
		t.Fatalf("choices: %v; %v; %v", ai, oi, ni)
	}
	t.Log(ai, "|", oi, "|", ni)
	// Decode rows at contexts up to 71 went through up to five partitions when on: the
	// logits must differ in rounding from the one-pass ones, or the test compares
	// nothing.
	same, worst := 0, 0.0
	for i := range logits[1] {
		if logits[1][i] == logits[2][i] {
			same++
		}
		worst = max(worst, math.Abs(float64(logits[1][i]-logits[2][i])))
	}
	t.Logf("logits after 71 decode steps: %d of %d equal with partitions off and on, largest difference %.3g", same, len(logits[1]), worst)
	if same == len(logits[1]) || worst > 1e-3 {
		t.Errorf("partitions on vs off: %d of %d logits equal, largest difference %.3g (want some difference, below 1e-3)", same, len(logits[1]), worst)
	}
	for i := range auto {
		if auto[i] != off[i] || auto[i] != on[i] {
			t.Errorf("request %d:\nauto %q\noff  %q\non   %q", i, auto[i], off[i], on[i])
		}
	}
}

// TestPartitionChoice checks how the choice is resolved: options, the environment
// variable, and a measured crossover that is stored and read back.
func TestPartitionChoice(t *testing.T) {
	dir := t.TempDir()
	load := func(o Options) PartitionInfo {
		o.CalibrationDir = dir
		e := builtinEngine(t, o)
		defer e.Close()
		return e.Partitions()
	}
	t.Setenv(PartitionsEnv, "")
	first := load(Options{})
	if first.Source != "measured" || first.Calibration == nil || len(first.Calibration.Points) == 0 {
		t.Fatalf("first load: %+v, want a measurement", first)
	}
	again := load(Options{})
	if !strings.HasPrefix(again.Source, "stored calibration ") || again.From != first.From {
		t.Fatalf("second load: %+v, want the stored calibration of %+v", again, first)
	}
	if p := load(Options{Threads: 1}); p.Source != "measured" {
		t.Errorf("one thread: %+v, want its own measurement", p)
	}
	for _, c := range []struct {
		env  string
		opts Options
		mode PartitionMode
		from int
		src  string
	}{
		{"off", Options{}, PartitionsOff, 0, "env"},
		{"on", Options{}, PartitionsOn, 0, "env"},
		{"300", Options{}, PartitionsAuto, 300, "env"},
		{"on", Options{Partitions: PartitionsOff}, PartitionsOff, 0, "option"},
		{"off", Options{PartitionFrom: 7}, PartitionsAuto, 7, "option"},
	} {
		t.Setenv(PartitionsEnv, c.env)
		p := load(c.opts)
		if p.Mode != c.mode || p.From != c.from || p.Source != c.src {
			t.Errorf("%s=%s with %+v: %+v, want %v from %d (%s)", PartitionsEnv, c.env, c.opts, p, c.mode, c.from, c.src)
		}
	}
	t.Setenv(PartitionsEnv, "sometimes")
	if _, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 2, CalibrationDir: dir}); err == nil {
		t.Error("a bad LLMBENCH_PARTITIONS value was accepted")
	}
}
