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

	LlamaBenchCPU `yaml:",inline"`
	LlamaBenchGPU `yaml:",inline"`
}

// LlamaBenchCPU holds llama-bench's CPU placement settings (lists are axes of the
// cross product, as llama-bench's): they act on the CPU engine.
type LlamaBenchCPU struct {
	CPUMask   []string `yaml:"cpu_mask,omitempty" json:"cpu_mask,omitempty"`     // -C: hex CPU mask, "0x0" = no mask
	CPUStrict []int    `yaml:"cpu_strict,omitempty" json:"cpu_strict,omitempty"` // --cpu-strict 0|1
	Poll      []int    `yaml:"poll,omitempty" json:"poll,omitempty"`             // --poll 0..100: busy-wait level of idle workers
	// UseMmap is -mmp 0|1 (or -lm none|mmap): map the weights (1) or read them into
	// memory (0).
	UseMmap []int `yaml:"use_mmap,omitempty" json:"use_mmap,omitempty"`
	// Prio is --prio -1..3: the nice value of the process while it runs (llama.cpp's
	// mapping: 5, 0, -5, -10, -20).
	Prio int `yaml:"prio,omitempty" json:"prio,omitempty"`
	// NUMA is --numa: "" (off), distribute, isolate or numactl.
	NUMA string `yaml:"numa,omitempty" json:"numa,omitempty"`
}

// LlamaBenchGPU holds llama-bench's GPU and device settings: accepted and recorded in
// every record (so copied command lines and llama.cpp's tools keep working) but with
// no effect on the CPU engine. Each list is an axis of the cross product, as in
// llama-bench. Empty lists take llama-bench's defaults (WithDefaults).
type LlamaBenchGPU struct {
	NGPULayers  []int    `yaml:"n_gpu_layers,omitempty" json:"n_gpu_layers,omitempty"`                   // -ngl (default -1)
	NCPUMoE     []int    `yaml:"n_cpu_moe,omitempty" json:"n_cpu_moe,omitempty"`                         // -ncmoe
	SplitMode   []string `yaml:"split_mode,omitempty" json:"split_mode,omitempty"`                       // -sm none|layer|row|tensor
	MainGPU     []int    `yaml:"main_gpu,omitempty" json:"main_gpu,omitempty"`                           // -mg
	NoKVOffload []int    `yaml:"no_kv_offload,omitempty" json:"no_kv_offload,omitempty"`                 // -nkvo 0|1
	Devices     []string `yaml:"devices,omitempty" json:"devices,omitempty"`                             // -dev (default auto)
	TensorSplit []string `yaml:"tensor_split,omitempty" json:"tensor_split,omitempty"`                   // -ts as llama-bench prints it ("0.00", "0.50/0.50")
	Overrides   []string `yaml:"tensor_buft_overrides,omitempty" json:"tensor_buft_overrides,omitempty"` // -ot (default none)
	Embeddings  []int    `yaml:"embeddings,omitempty" json:"embeddings,omitempty"`                       // -embd 0|1
	NoOpOffload []int    `yaml:"no_op_offload,omitempty" json:"no_op_offload,omitempty"`                 // -nopo 0|1
	NoHost      []int    `yaml:"no_host,omitempty" json:"no_host,omitempty"`                             // --no-host 0|1
	FitTarget   []int    `yaml:"fit_target,omitempty" json:"fit_target,omitempty"`                       // -fitt MiB
	FitMinCtx   []int    `yaml:"fit_min_ctx,omitempty" json:"fit_min_ctx,omitempty"`                     // -fitc
}

// Set reports whether any GPU-only setting was given (so a front end can say once
// that they have no effect on the CPU engine).
func (g LlamaBenchGPU) Set() bool {
	return len(g.NGPULayers)+len(g.NCPUMoE)+len(g.SplitMode)+len(g.MainGPU)+len(g.NoKVOffload)+len(g.Devices)+
		len(g.TensorSplit)+len(g.Overrides)+len(g.Embeddings)+len(g.NoOpOffload)+len(g.NoHost)+len(g.FitTarget)+len(g.FitMinCtx) > 0
}

// FlashAttnAuto is -fa auto (llama-bench's default, recorded as -1): the engine uses
// the fused path, which the CPU backend has for every model.
const FlashAttnAuto = -1

// Llama-bench's defaults of the settings above.
const (
	DefaultCPUMask   = "0x0"
	DefaultPoll      = 50
	DefaultNGPU      = -1
	DefaultSplitMode = "layer"
	DefaultDevices   = "auto"
	DefaultTSplit    = "0.00"
	DefaultOverrides = "none"
)

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
	s.LlamaBenchCPU, s.LlamaBenchGPU = s.LlamaBenchCPU.withDefaults(), s.LlamaBenchGPU.withDefaults()
	return s
}

func defStrings(v []string, d string) []string {
	if len(v) == 0 {
		return []string{d}
	}
	return v
}

func defInts(v []int, d int) []int {
	if len(v) == 0 {
		return []int{d}
	}
	return v
}

func (c LlamaBenchCPU) withDefaults() LlamaBenchCPU {
	c.CPUMask, c.CPUStrict, c.Poll, c.UseMmap = defStrings(c.CPUMask, DefaultCPUMask), defInts(c.CPUStrict, 0), defInts(c.Poll, DefaultPoll), defInts(c.UseMmap, 1)
	return c
}

func (g LlamaBenchGPU) withDefaults() LlamaBenchGPU {
	g.NGPULayers, g.NCPUMoE, g.SplitMode, g.MainGPU = defInts(g.NGPULayers, DefaultNGPU), defInts(g.NCPUMoE, 0), defStrings(g.SplitMode, DefaultSplitMode), defInts(g.MainGPU, 0)
	g.NoKVOffload, g.Devices, g.TensorSplit, g.Overrides = defInts(g.NoKVOffload, 0), defStrings(g.Devices, DefaultDevices), defStrings(g.TensorSplit, DefaultTSplit), defStrings(g.Overrides, DefaultOverrides)
	g.Embeddings, g.NoOpOffload, g.NoHost, g.FitTarget, g.FitMinCtx = defInts(g.Embeddings, 0), defInts(g.NoOpOffload, 0), defInts(g.NoHost, 0), defInts(g.FitTarget, 0), defInts(g.FitMinCtx, 0)
	return g
}

// validate reports the first CPU setting out of range, naming its flag.
func (c LlamaBenchCPU) validate() error {
	for _, m := range c.CPUMask {
		if _, err := ParseCPUMask(m); err != nil {
			return fmt.Errorf("-C: %w", err)
		}
	}
	for _, b := range []struct {
		flag string
		v    []int
	}{{"--cpu-strict", c.CPUStrict}, {"-mmp", c.UseMmap}} {
		for _, x := range b.v {
			if x != 0 && x != 1 {
				return fmt.Errorf("%s: %d is not 0 or 1", b.flag, x)
			}
		}
	}
	for _, p := range c.Poll {
		if p < 0 || p > 100 {
			return fmt.Errorf("--poll: %d is out of range (0 to 100)", p)
		}
	}
	if c.Prio < -1 || c.Prio > 3 {
		return fmt.Errorf("--prio: %d is not one of -1, 0, 1, 2, 3", c.Prio)
	}
	switch c.NUMA {
	case "", "distribute", "isolate", "numactl":
	default:
		return fmt.Errorf("--numa: %q is not distribute, isolate or numactl", c.NUMA)
	}
	return nil
}

// ParseCPUMask parses llama-bench's -C value: a hexadecimal mask of CPUs, with or
// without 0x ("0x0F", "ff"); bit i is CPU i. The result lists the CPUs set, empty
// for "0x0" (no mask: every CPU).
func ParseCPUMask(s string) ([]int, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	if h == "" {
		return nil, fmt.Errorf("%q is not a hexadecimal CPU mask", s)
	}
	var cpus []int
	for i := len(h) - 1; i >= 0; i-- {
		d, err := strconv.ParseUint(h[i:i+1], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%q is not a hexadecimal CPU mask", s)
		}
		for b := range 4 {
			if d&(1<<b) != 0 {
				cpus = append(cpus, (len(h)-1-i)*4+b)
			}
		}
	}
	return cpus, nil
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
		if fa != 0 && fa != 1 && fa != FlashAttnAuto {
			return fmt.Errorf("-fa: %d is not 0, 1 or -1 (off, on, auto)", fa)
		}
	}
	if err := s.LlamaBenchCPU.validate(); err != nil {
		return err
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

// LlamaBenchKVTypes are the KV cache types llama-bench's -ctk/-ctv accept, as it
// spells them.
var LlamaBenchKVTypes = []string{"f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}

// EngineKVTypes are the KV cache types the engine keeps (f32 is llmbench's addition).
var EngineKVTypes = []string{"f16", "q8_0", "f32"}

// CheckKVType refuses a KV cache type the engine lacks, in one line naming those it
// has.
func CheckKVType(t string) error {
	t = strings.ToLower(t)
	for _, e := range EngineKVTypes {
		if t == e {
			return nil
		}
	}
	for _, l := range LlamaBenchKVTypes {
		if t == l {
			return fmt.Errorf("KV cache type %s: the engine keeps %s", t, strings.Join(EngineKVTypes, ", "))
		}
	}
	return fmt.Errorf("%q is not a KV cache type (llama-bench's: %s; the engine keeps %s)", t, strings.Join(LlamaBenchKVTypes, ", "), strings.Join(EngineKVTypes, ", "))
}
