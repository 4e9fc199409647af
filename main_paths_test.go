package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/tui/screens/setup"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/result"
	"llmbench/workloads/store"
)

// timingKey matches the keys of a stored result whose values are measured times,
// rates or readings: they differ between two runs of the same job on any machine.
var timingKey = regexp.MustCompile(`(?i)(^|_)(samplesns|avgns|stddevns|test_time|avg_ts|stddev_ts|ttft\w*|tpot|itl\w*|latency|e2el|duration|started|start|arrival|scheduled|.*throughput|.*_s|.*_ms|.*_ns|telemetry|readbandwidth|chunktokens|rss\w*|peak\w*|energy\w*|power\w*|rate_changes|ratechanges|connect\w*|newconn|concurrentpersecond|maxconcurrentrequests|goodput\w*|.*lag\w*|elapsed|summary|env|id)$`)

// stripTimings removes the timing keys from a decoded JSON value, recursively.
func stripTimings(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if !timingKey.MatchString(k) {
				out[k] = stripTimings(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripTimings(e)
		}
		return out
	}
	return v
}

// storedRun reads the only run of the store under home: its kept job (profile YAML)
// and its result.json without timings.
func storedRun(t *testing.T, home string) (string, any) {
	t.Helper()
	s, list := storedRuns(t, home, 1)
	yml, err := s.ProfileYAML(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir(), list[0].ID, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return string(yml), stripTimings(doc)
}

// diffJSON lists the paths where a and b differ.
func diffJSON(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path+": kind differs")
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			diffJSON(path+"."+k, x[k], y[k], out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, path+": lengths differ")
			return
		}
		for i := range x {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, path+": "+jsonText(a)+" ≠ "+jsonText(b))
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTUIAndHeadlessRunTheSameJob runs each Setup config once headless (`llmbench run`
// of the profile Setup saves) and once through the TUI's path (the Starter the
// workbench calls), and checks that the stored job and every result field except
// timings are identical: there is one run core, not two.
func TestTUIAndHeadlessRunTheSameJob(t *testing.T) {
	// The serve run is at concurrency 1: at 2, its engine's decode_steps depend on how
	// the two streams line up after Setup's warm-up requests (which leave the first
	// prompt in the prefix cache), so two identical jobs differ there run to run.
	configs := []setup.Config{
		{Kind: setup.Bench, Model: workloads.BenchModel{Path: setup.Builtin}, Prompt: 16, Gen: 8, Reps: 2, Threads: 1},
		{Kind: setup.Serve, Model: workloads.BenchModel{Path: setup.Builtin}, Dataset: "random", Prompts: 6, Concurrency: []int{1}, Rate: []float64{math.Inf(1)}, InputLen: 128, OutputLen: 64},
	}
	for _, c := range configs {
		t.Run(c.Kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p.yaml")
			if err := profiles.Save(path, tui.ProfileOf(c)); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runEnv(t, []string{"LLMBENCH_HOME=" + filepath.Join(dir, "headless")}, "run", path, "--headless")
			if code != 0 {
				t.Fatalf("headless: exit %d\n%s", code, stderr)
			}
			st, err := store.OpenStore(filepath.Join(dir, "tui"))
			if err != nil {
				t.Fatal(err)
			}
			dev, err := jobs.OpenDevice("auto", func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			done := runSetup(t, dev, st, c)
			if s, ok := done.Result.(*result.Stored); !ok || done.Err != nil || done.Partial || s.ID == "" {
				t.Fatalf("TUI path: %+v", done)
			}
			hy, hd := storedRun(t, filepath.Join(dir, "headless"))
			ty, td := storedRun(t, filepath.Join(dir, "tui"))
			if hy != ty {
				t.Errorf("stored jobs differ:\nheadless:\n%s\nTUI:\n%s", hy, ty)
			}
			var diffs []string
			diffJSON("result", hd, td, &diffs)
			if len(diffs) > 0 {
				t.Errorf("results differ beyond timings:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

// storedRuns opens the results store under home and returns it with its runs (newest
// first), failing the test unless it holds n.
func storedRuns(t *testing.T, home string, n int) (*store.Store, []store.Entry) {
	t.Helper()
	s, err := store.OpenStore(home)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != n {
		t.Fatalf("store %s: %d runs, want %d: %+v %v", home, len(list), n, list, err)
	}
	return s, list
}
