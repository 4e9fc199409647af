// Package micro runs llama-bench style micro-benchmarks on the in-process engine:
// prompt processing (pp), token generation (tg), prompt then generation (pg), each at
// an optional prefilled depth, over the cross product of the parameters of a
// workloads.BenchSpec, timed per repetition on the monotonic clock.
package micro

import (
	"fmt"
	"strings"

	"llmbench/workloads"
)

// Instance is one test of the cross product: a model, its load-time parameters and
// one pp, tg or pg test.
type Instance struct {
	Model     workloads.BenchModel
	NPrompt   int
	NGen      int
	NDepth    int
	NBatch    int
	NUBatch   int
	TypeK     string // lower case, as ggml names it ("f16")
	TypeV     string
	Threads   int // 0 = all cores
	FlashAttn int // 0, 1 or -1 (auto: on, the CPU backend has it for every model)
	// Settings are llama-bench's other per-test settings: the CPU ones act, the GPU
	// ones are recorded only.
	Settings
}

// Settings are one combination of llama-bench's CPU and GPU settings.
type Settings struct {
	CPUMask   string
	CPUStrict int
	Poll      int
	UseMmap   int

	NGPULayers, NCPUMoE, MainGPU    int
	SplitMode, Devices, TensorSplit string
	Overrides                       string
	NoKVOffload, Embeddings         int
	NoOpOffload, NoHost             int
	FitTarget, FitMinCtx            int
}

// settings returns the cross product of spec's CPU and GPU settings (defaults filled
// in), GPU settings slowest, as llama-bench crosses its load-time parameters outside
// the per-context ones.
func settings(spec workloads.BenchSpec) []Settings {
	out := []Settings{{}}
	cross := func(n int, set func(s *Settings, i int)) {
		var next []Settings
		for _, s := range out {
			for i := range n {
				c := s
				set(&c, i)
				next = append(next, c)
			}
		}
		out = next
	}
	g, c := spec.LlamaBenchGPU, spec.LlamaBenchCPU
	cross(len(g.NGPULayers), func(s *Settings, i int) { s.NGPULayers = g.NGPULayers[i] })
	cross(len(g.NCPUMoE), func(s *Settings, i int) { s.NCPUMoE = g.NCPUMoE[i] })
	cross(len(g.SplitMode), func(s *Settings, i int) { s.SplitMode = g.SplitMode[i] })
	cross(len(c.UseMmap), func(s *Settings, i int) { s.UseMmap = c.UseMmap[i] })
	cross(len(g.MainGPU), func(s *Settings, i int) { s.MainGPU = g.MainGPU[i] })
	cross(len(g.TensorSplit), func(s *Settings, i int) { s.TensorSplit = g.TensorSplit[i] })
	cross(len(g.Overrides), func(s *Settings, i int) { s.Overrides = g.Overrides[i] })
	cross(len(g.Devices), func(s *Settings, i int) { s.Devices = g.Devices[i] })
	cross(len(g.NoKVOffload), func(s *Settings, i int) { s.NoKVOffload = g.NoKVOffload[i] })
	cross(len(g.Embeddings), func(s *Settings, i int) { s.Embeddings = g.Embeddings[i] })
	cross(len(g.NoOpOffload), func(s *Settings, i int) { s.NoOpOffload = g.NoOpOffload[i] })
	cross(len(g.NoHost), func(s *Settings, i int) { s.NoHost = g.NoHost[i] })
	cross(len(g.FitTarget), func(s *Settings, i int) { s.FitTarget = g.FitTarget[i] })
	cross(len(g.FitMinCtx), func(s *Settings, i int) { s.FitMinCtx = g.FitMinCtx[i] })
	cross(len(c.CPUMask), func(s *Settings, i int) { s.CPUMask = c.CPUMask[i] })
	cross(len(c.CPUStrict), func(s *Settings, i int) { s.CPUStrict = c.CPUStrict[i] })
	cross(len(c.Poll), func(s *Settings, i int) { s.Poll = c.Poll[i] })
	return out
}

// Name returns the test's name as llama-bench prints it: "pp512", "tg128",
// "pp512+tg128", with " @ d1024" for a prefilled depth.
func (in Instance) Name() string { return TestName(in.NPrompt, in.NGen, in.NDepth) }

// TestName names a test as llama-bench does.
func TestName(nPrompt, nGen, nDepth int) string {
	var s string
	switch {
	case nPrompt > 0 && nGen == 0:
		s = fmt.Sprintf("pp%d", nPrompt)
	case nGen > 0 && nPrompt == 0:
		s = fmt.Sprintf("tg%d", nGen)
	default:
		s = fmt.Sprintf("pp%d+tg%d", nPrompt, nGen)
	}
	if nDepth > 0 {
		s += fmt.Sprintf(" @ d%d", nDepth)
	}
	return s
}

// sameEngine reports whether two instances can share a loaded engine.
func (in Instance) sameEngine(o Instance) bool {
	return in.Model == o.Model && in.Threads == o.Threads && in.ubatch() == o.ubatch() &&
		in.TypeK == o.TypeK && in.TypeV == o.TypeV && in.FlashAttn == o.FlashAttn && in.UseMmap == o.UseMmap
}

// ubatch is the tokens per forward pass: llama.cpp clamps n_ubatch to n_batch.
func (in Instance) ubatch() int { return min(in.NBatch, in.NUBatch) }

// Expand returns the cross product of spec (defaults filled in), in llama-bench's
// order: model, the GPU and CPU settings (see settings), batch, ubatch, K type, V
// type, flash attention, threads and depth vary from slowest to fastest, and for each combination the pp tests come first, then
// tg, then pg. Tests of 0 tokens are skipped. When spec.TypeV is empty the V type
// follows the K type instead of being crossed with it.
func Expand(spec workloads.BenchSpec) []Instance {
	spec = spec.WithDefaults()
	type kv struct{ k, v string }
	var kvs []kv
	for _, k := range spec.TypeK {
		if len(spec.TypeV) == 0 {
			kvs = append(kvs, kv{k, k})
			continue
		}
		for _, v := range spec.TypeV {
			kvs = append(kvs, kv{k, v})
		}
	}
	var out []Instance
	sets := settings(spec)
	for _, m := range spec.Models {
		for _, st := range sets {
			for _, nb := range spec.Batch {
				for _, nub := range spec.UBatch {
					for _, t := range kvs {
						for _, fa := range spec.FlashAttn {
							for _, nt := range spec.Threads {
								for _, nd := range spec.Depth {
									base := Instance{Model: m, NDepth: nd, NBatch: nb, NUBatch: nub,
										TypeK: strings.ToLower(t.k), TypeV: strings.ToLower(t.v), Threads: nt, FlashAttn: fa, Settings: st}
									for _, p := range spec.Prompt {
										if p > 0 {
											in := base
											in.NPrompt = p
											out = append(out, in)
										}
									}
									for _, n := range spec.Gen {
										if n > 0 {
											in := base
											in.NGen = n
											out = append(out, in)
										}
									}
									for _, pg := range spec.PG {
										if pg.Prompt > 0 || pg.Gen > 0 {
											in := base
											in.NPrompt, in.NGen = pg.Prompt, pg.Gen
											out = append(out, in)
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}
