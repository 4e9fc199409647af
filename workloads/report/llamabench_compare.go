package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
)

// LlamaBenchRun is one saved bench run (llama-bench's or llmbench's -o json or jsonl),
// reduced to what a comparison needs.
type LlamaBenchRun struct {
	Name  string // the file it came from
	Tests []LlamaBenchTest
}

// LlamaBenchTest is one test of a saved run: its identifying fields (as text, so that
// any llama-bench version's types read) and its per-repetition tokens per second.
type LlamaBenchTest struct {
	Fields  map[string]string
	Samples []float64
}

// lbKeyFields identify a test; a comparison matches tests on those that do not
// differ wholesale between the two runs.
var lbKeyFields = []string{"model_type", "n_batch", "n_ubatch", "n_threads", "type_k", "type_v", "flash_attn", "n_prompt", "n_gen", "n_depth"}

// lbTestFields are never dropped from the key: they say which test it is.
var lbTestFields = map[string]bool{"n_prompt": true, "n_gen": true, "n_depth": true}

// ReadLlamaBench reads a saved run: a JSON array of test objects or JSON lines.
func ReadLlamaBench(name string, r io.Reader) (*LlamaBenchRun, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var objs []map[string]json.RawMessage
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		if err := json.Unmarshal(trimmed, &objs); err != nil {
			return nil, fmt.Errorf("%s: not llama-bench JSON: %w", name, err)
		}
	} else {
		sc := bufio.NewScanner(bytes.NewReader(trimmed))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for line := 1; sc.Scan(); line++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var o map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
				return nil, fmt.Errorf("%s:%d: not llama-bench JSON lines: %w", name, line, err)
			}
			objs = append(objs, o)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s: no tests", name)
	}
	run := &LlamaBenchRun{Name: name}
	for i, o := range objs {
		t := LlamaBenchTest{Fields: map[string]string{}}
		for _, k := range lbKeyFields {
			if raw, ok := o[k]; ok {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw) // numbers and booleans as written
				}
				t.Fields[k] = s
			}
		}
		if raw, ok := o["samples_ts"]; ok {
			if err := json.Unmarshal(raw, &t.Samples); err != nil {
				return nil, fmt.Errorf("%s: test %d: samples_ts: %w", name, i+1, err)
			}
		} else if raw, ok := o["avg_ts"]; ok {
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s: test %d: avg_ts: %w", name, i+1, err)
			}
			t.Samples = []float64{v}
		} else {
			return nil, fmt.Errorf("%s: test %d has neither samples_ts nor avg_ts", name, i+1)
		}
		if len(t.Samples) == 0 {
			return nil, fmt.Errorf("%s: test %d has no samples", name, i+1)
		}
		run.Tests = append(run.Tests, t)
	}
	return run, nil
}

// CompareRow is one test of an A/B comparison.
type CompareRow struct {
	Test     string // "tg128", with the parameters that tell tests apart
	A, B     []float64
	Welch    metrics.Welch
	Speedup  float64 // mean B ÷ mean A
	SpeedErr float64 // half-width of the speedup's confidence interval
	Missing  string  // "A" or "B" when the test ran in one run only
}

// Verdict says whether the difference is beyond noise.
func (c CompareRow) Verdict() string {
	switch {
	case c.Missing != "":
		return "only in " + map[string]string{"A": "B", "B": "A"}[c.Missing]
	case len(c.A) < 2 || len(c.B) < 2:
		return "too few samples to tell"
	case !c.Welch.Significant:
		return fmt.Sprintf("no significant difference (p=%.2f)", c.Welch.P)
	case c.Speedup > 1:
		return fmt.Sprintf("significant: B faster (p=%s)", lbP(c.Welch.P))
	}
	return fmt.Sprintf("significant: B slower (p=%s)", lbP(c.Welch.P))
}

func lbP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// Comparison is the result of comparing two saved runs.
type Comparison struct {
	A, B  string // file names
	Diff  string // the fields that differ wholesale between the runs ("n_threads: 1 → 2")
	Alpha float64
	Rows  []CompareRow
}

// CompareLlamaBench matches the tests of a and b and tests each pair with Welch's
// t-test at level alpha over the repetitions (run-level figures, independent of one
// another, unlike per-request samples). Fields constant within each run but different between them
// (the thing being compared, such as n_threads or model_type) are left out of the
// matching; the test itself (n_prompt, n_gen, n_depth) always counts.
func CompareLlamaBench(a, b *LlamaBenchRun, alpha float64) (*Comparison, error) {
	if alpha <= 0 || alpha >= 1 {
		return nil, fmt.Errorf("alpha %g is not between 0 and 1", alpha)
	}
	constant := func(r *LlamaBenchRun, k string) (string, bool) {
		v, ok := r.Tests[0].Fields[k]
		for _, t := range r.Tests[1:] {
			if t.Fields[k] != v {
				return "", false
			}
		}
		return v, ok
	}
	var key, varying, diffs []string
	for _, k := range lbKeyFields {
		va, ca := constant(a, k)
		vb, cb := constant(b, k)
		if ca && cb && va != vb && !lbTestFields[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, va, vb))
			continue
		}
		key = append(key, k)
		if !lbTestFields[k] && (!ca || !cb) {
			varying = append(varying, k)
		}
	}
	keyOf := func(t LlamaBenchTest) string {
		parts := make([]string, len(key))
		for i, k := range key {
			parts[i] = t.Fields[k]
		}
		return strings.Join(parts, "\x00")
	}
	label := func(t LlamaBenchTest) string {
		atoi := func(k string) int {
			var n int
			fmt.Sscan(t.Fields[k], &n)
			return n
		}
		s := micro.TestName(atoi("n_prompt"), atoi("n_gen"), atoi("n_depth"))
		for _, k := range varying {
			s += fmt.Sprintf(" %s=%s", k, t.Fields[k])
		}
		return s
	}
	bIdx := map[string]int{}
	for i, t := range b.Tests {
		k := keyOf(t)
		if _, dup := bIdx[k]; dup {
			return nil, fmt.Errorf("%s: two tests are %s", b.Name, label(t))
		}
		bIdx[k] = i
	}
	c := &Comparison{A: a.Name, B: b.Name, Diff: strings.Join(diffs, ", "), Alpha: alpha}
	seen := map[string]bool{}
	for _, ta := range a.Tests {
		k := keyOf(ta)
		if seen[k] {
			return nil, fmt.Errorf("%s: two tests are %s", a.Name, label(ta))
		}
		seen[k] = true
		row := CompareRow{Test: label(ta), A: ta.Samples}
		j, ok := bIdx[k]
		if !ok {
			row.Missing = "B"
			c.Rows = append(c.Rows, row)
			continue
		}
		row.B = b.Tests[j].Samples
		row.Welch = metrics.WelchTest(row.A, row.B, alpha)
		row.Speedup = row.Welch.MeanB / row.Welch.MeanA
		if !math.IsNaN(row.Welch.CILow) {
			row.SpeedErr = (row.Welch.CIHigh - row.Welch.CILow) / 2 / row.Welch.MeanA
		}
		c.Rows = append(c.Rows, row)
	}
	for _, tb := range b.Tests {
		if !seen[keyOf(tb)] {
			c.Rows = append(c.Rows, CompareRow{Test: label(tb), B: tb.Samples, Missing: "A"})
		}
	}
	if len(c.Rows) == 0 {
		return nil, errors.New("nothing to compare")
	}
	return c, nil
}

// method names the verdicts' test: "Welch t over 5 repetitions" when every compared
// test has as many repetitions, "Welch t over each test's repetitions" otherwise.
func (c *Comparison) method() string {
	desc := ""
	for _, r := range c.Rows {
		if r.Missing != "" {
			continue
		}
		d := metrics.DescribeWelch(len(r.A), len(r.B))
		if desc != "" && d != desc {
			return string(metrics.MethodWelchRepeats) + " over each test's repetitions"
		}
		desc = d
	}
	if desc == "" {
		return string(metrics.MethodWelchRepeats) + " over the repetitions"
	}
	return desc
}

// LlamaBenchCompareMarkdown writes a comparison as a markdown table: test, t/s A,
// t/s B (mean ± sample std), speedup (B ÷ A), ± (half-width of its confidence
// interval) and the verdict.
func LlamaBenchCompareMarkdown(w io.Writer, c *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", c.A, c.B)
	if c.Diff != "" {
		fmt.Fprintf(&b, "differs: %s\n", c.Diff)
	}
	fmt.Fprintf(&b, "verdict: %s at alpha %g (run-level: each repetition's t/s is one sample); speedup = t/s B ÷ t/s A, ± its %g%% confidence interval\n\n",
		c.method(), c.Alpha, 100*(1-c.Alpha))
	cols := []struct {
		head  string
		width int
	}{{"test", -20}, {"t/s A", 20}, {"t/s B", 20}, {"speedup", 7}, {"±", 6}, {"verdict", -36}}
	b.WriteString("|")
	for _, col := range cols {
		fmt.Fprintf(&b, " %*s |", col.width, col.head)
	}
	b.WriteString("\n|")
	for _, col := range cols {
		if col.width < 0 {
			fmt.Fprintf(&b, " %s |", strings.Repeat("-", -col.width))
		} else {
			fmt.Fprintf(&b, " %s: |", strings.Repeat("-", col.width-1))
		}
	}
	b.WriteString("\n")
	ts := func(s []float64) string {
		if len(s) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f ± %.2f", metrics.Mean(s), metrics.SampleStd(s))
	}
	for _, r := range c.Rows {
		speed, pm := "-", "-"
		if r.Missing == "" {
			speed = fmt.Sprintf("%.3fx", r.Speedup)
			if r.SpeedErr > 0 || len(r.A) > 1 && len(r.B) > 1 {
				pm = fmt.Sprintf("%.3f", r.SpeedErr)
			}
		}
		cells := []string{r.Test, ts(r.A), ts(r.B), speed, pm, r.Verdict()}
		b.WriteString("|")
		for i, col := range cols {
			fmt.Fprintf(&b, " %*s |", col.width, cells[i])
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
