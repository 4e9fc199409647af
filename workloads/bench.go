package workloads

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"llmbench/engine"
)

// BenchSpec is a llama-bench style benchmark: every list is one axis of a cross
// product, and each combination runs the prompt (pp), generation (tg) and
// prompt-then-generation (pg) tests, Reps times after one warmup. Field names follow
// llama-bench's command line and JSON output.
type BenchSpec struct {
	Models    []BenchModel `yaml:"models" json:"models"`
	Prompt    []int        `yaml:"n_prompt" json:"n_prompt"`       // -p: prompt tokens per pp test
	Gen       []int        `yaml:"n_gen" json:"n_gen"`             // -n: generated tokens per tg test
	PG        []PG         `yaml:"n_pg,omitempty" json:"n_pg"`     // -pg: prompt then generation
	Depth     []int        `yaml:"n_depth" json:"n_depth"`         // -d: prefilled (untimed) context
	Batch     []int        `yaml:"n_batch" json:"n_batch"`         // -b: logical batch
	UBatch    []int        `yaml:"n_ubatch" json:"n_ubatch"`       // -ub: physical batch (tokens per forward pass)
	TypeK     []string     `yaml:"type_k" json:"type_k"`           // -ctk: KV cache type of K
	TypeV     []string     `yaml:"type_v,omitempty" json:"type_v"` // -ctv: KV cache type of V; empty = follow TypeK
	Threads   []int        `yaml:"n_threads" json:"n_threads"`     // -t
	FlashAttn []int        `yaml:"flash_attn" json:"flash_attn"`   // -fa: 0 or 1
	Reps      int          `yaml:"repetitions" json:"repetitions"`
	// Delay is the pause before each test, in seconds, to let the machine cool down.
	Delay    float64 `yaml:"delay,omitempty" json:"delay"`
	NoWarmup bool    `yaml:"no_warmup,omitempty" json:"no_warmup"`
	// Seed seeds the random prompt and generation tokens.
	Seed uint64 `yaml:"seed,omitempty" json:"seed"`
}

// BenchModel names one model to benchmark: a GGUF file, or a synthetic model given by
// shape and type (written and cached on first use).
type BenchModel struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Shape string `yaml:"shape,omitempty" json:"shape,omitempty"`
	Type  string `yaml:"type,omitempty" json:"type,omitempty"`
}

// String returns the path, or "synth:SHAPE:TYPE" for a synthetic model.
func (m BenchModel) String() string {
	if m.Path != "" {
		return m.Path
	}
	return "synth:" + m.Shape + ":" + m.Type
}

// PG is one prompt-then-generation test (llama-bench's -pg P,N).
type PG struct {
	Prompt int `yaml:"n_prompt" json:"n_prompt"`
	Gen    int `yaml:"n_gen" json:"n_gen"`
}

// Bench defaults, as llama-bench's (threads: 0 = all cores).
const (
	DefaultBenchPrompt = 512
	DefaultBenchGen    = 128
	DefaultBenchBatch  = 2048
	DefaultBenchUBatch = 512
	DefaultBenchReps   = 5
	DefaultBenchKV     = "f16"
)

// WithDefaults returns s with every empty axis set to llama-bench's default.
func (s BenchSpec) WithDefaults() BenchSpec {
	def := func(v []int, d int) []int {
		if len(v) == 0 {
			return []int{d}
		}
		return v
	}
	s.Prompt = def(s.Prompt, DefaultBenchPrompt)
	s.Gen = def(s.Gen, DefaultBenchGen)
	s.Depth = def(s.Depth, 0)
	s.Batch = def(s.Batch, DefaultBenchBatch)
	s.UBatch = def(s.UBatch, DefaultBenchUBatch)
	s.Threads = def(s.Threads, 0)
	s.FlashAttn = def(s.FlashAttn, 0)
	if len(s.TypeK) == 0 {
		s.TypeK = []string{DefaultBenchKV}
	}
	if s.Reps == 0 {
		s.Reps = DefaultBenchReps
	}
	return s
}

// Validate reports the first value that cannot run, naming its flag.
func (s BenchSpec) Validate() error {
	if len(s.Models) == 0 {
		return errors.New("no model given")
	}
	for _, m := range s.Models {
		if (m.Path == "") == (m.Shape == "") {
			return fmt.Errorf("model %v: give a file or a synthetic shape, not both or neither", m)
		}
		if m.Shape != "" && m.Type == "" {
			return fmt.Errorf("synthetic model %q: no type", m.Shape)
		}
	}
	nonNeg := func(flag string, v []int, min int) error {
		for _, x := range v {
			if x < min {
				return fmt.Errorf("%s: %d is out of range (minimum %d)", flag, x, min)
			}
		}
		return nil
	}
	for _, c := range []struct {
		flag string
		v    []int
		min  int
	}{{"-p", s.Prompt, 0}, {"-n", s.Gen, 0}, {"-d", s.Depth, 0}, {"-b", s.Batch, 1}, {"-ub", s.UBatch, 1}, {"-t", s.Threads, 0}} {
		if err := nonNeg(c.flag, c.v, c.min); err != nil {
			return err
		}
	}
	for _, t := range s.Threads {
		if err := (engine.Options{Threads: t}).Validate(); err != nil {
			return fmt.Errorf("-t: %v", err)
		}
	}
	for _, fa := range s.FlashAttn {
		if fa != 0 && fa != 1 {
			return fmt.Errorf("-fa: %d is not 0 or 1", fa)
		}
	}
	for _, pg := range s.PG {
		if pg.Prompt < 0 || pg.Gen < 0 {
			return fmt.Errorf("-pg: %d,%d is out of range", pg.Prompt, pg.Gen)
		}
	}
	if s.Reps < 1 {
		return fmt.Errorf("-r: %d repetitions (minimum 1)", s.Reps)
	}
	if s.Delay < 0 || math.IsNaN(s.Delay) {
		return fmt.Errorf("--delay: %g seconds is negative", s.Delay)
	}
	hasTest := false
	for _, v := range s.Prompt {
		hasTest = hasTest || v > 0
	}
	for _, v := range s.Gen {
		hasTest = hasTest || v > 0
	}
	for _, pg := range s.PG {
		hasTest = hasTest || pg.Prompt > 0 || pg.Gen > 0
	}
	if !hasTest {
		return errors.New("no test to run: every -p, -n and -pg is 0")
	}
	return nil
}

// ParseIntList parses llama-bench's list syntax: comma-separated items, each a number
// or a range "first-last" (step 1), "first-last+step" or "first-last*factor".
func ParseIntList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty list")
	}
	var out []int
	for _, item := range strings.Split(s, ",") {
		v, err := parseIntRange(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}

// maxRangeLen bounds a range's expansion so a typo cannot allocate without end.
const maxRangeLen = 1 << 16

func parseIntRange(item string) ([]int, error) {
	if item == "" {
		return nil, errors.New("empty item in list")
	}
	atoi := func(s string) (int, error) {
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("%q is not a non-negative integer", s)
			}
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a non-negative integer", s)
		}
		return n, nil
	}
	first, rest, isRange := strings.Cut(item, "-")
	if !isRange {
		n, err := atoi(item)
		if err != nil {
			return nil, err
		}
		return []int{n}, nil
	}
	lo, err := atoi(first)
	if err != nil {
		return nil, fmt.Errorf("range %q: %w", item, err)
	}
	op, step := byte('+'), 1
	lastStr := rest
	if i := strings.IndexAny(rest, "+*"); i >= 0 {
		op, lastStr = rest[i], rest[:i]
		if step, err = atoi(rest[i+1:]); err != nil {
			return nil, fmt.Errorf("range %q: step: %w", item, err)
		}
	}
	hi, err := atoi(lastStr)
	if err != nil {
		return nil, fmt.Errorf("range %q: %w", item, err)
	}
	if hi < lo {
		return nil, fmt.Errorf("range %q: last is below first", item)
	}
	var out []int
	for v := lo; v <= hi; {
		out = append(out, v)
		if len(out) > maxRangeLen {
			return nil, fmt.Errorf("range %q has more than %d values", item, maxRangeLen)
		}
		next := v + step
		if op == '*' {
			next = v * step
		}
		if next <= v {
			return nil, fmt.Errorf("range %q does not increase", item)
		}
		v = next
	}
	return out, nil
}

// ParsePG parses one -pg value "P,N".
func ParsePG(s string) (PG, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok || strings.Contains(b, ",") {
		return PG{}, fmt.Errorf("%q is not P,N (prompt tokens, generated tokens)", s)
	}
	p, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || p < 0 || n < 0 {
		return PG{}, fmt.Errorf("%q is not P,N with non-negative integers", s)
	}
	return PG{Prompt: p, Gen: n}, nil
}
