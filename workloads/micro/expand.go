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
	FlashAttn int // 0 or 1
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
		in.TypeK == o.TypeK && in.TypeV == o.TypeV && in.FlashAttn == o.FlashAttn
}

// ubatch is the tokens per forward pass: llama.cpp clamps n_ubatch to n_batch.
func (in Instance) ubatch() int { return min(in.NBatch, in.NUBatch) }

// Expand returns the cross product of spec (defaults filled in), in llama-bench's
// order: model, batch, ubatch, K type, V type, flash attention, threads and depth
// vary from slowest to fastest, and for each combination the pp tests come first, then
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
	for _, m := range spec.Models {
		for _, nb := range spec.Batch {
			for _, nub := range spec.UBatch {
				for _, t := range kvs {
					for _, fa := range spec.FlashAttn {
						for _, nt := range spec.Threads {
							for _, nd := range spec.Depth {
								base := Instance{Model: m, NDepth: nd, NBatch: nb, NUBatch: nub,
									TypeK: strings.ToLower(t.k), TypeV: strings.ToLower(t.v), Threads: nt, FlashAttn: fa}
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
	return out
}
