package kernelbench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"llmbench/kernels/cpu"
	"llmbench/workloads"
)

// Mask is one of attention-gym's benchmark variants: a mask (mask_mod), a score
// modification (score_mod), or both.
type Mask struct {
	// Name is the variant's name on the command line (attention-gym's example key).
	Name string
	// build returns the variant at spec's sizes.
	build func(spec workloads.KernelSpec) variant
}

// variant is a mask at given sizes.
type variant struct {
	// title is the section title, attention-gym's: the mask_mod or score_mod
	// function's name, title-cased ("Sliding Window 1024").
	title string
	// mask is nil for a variant with no mask (every position allowed: the dense kernel
	// gets an all-true mask, the block map is all full).
	mask cpu.MaskFunc
	// perBatch: the mask depends on the batch (the document mask with per-batch
	// document lengths); no variant depends on the head.
	perBatch bool
	mod      cpu.ScoreMod
}

// Masks lists attention-gym's variants in its order: causal, ALiBi, sliding window,
// prefix-LM causal, document, tanh soft cap 30 exact and approximate.
func Masks() []Mask { return masks }

// maskByName returns the variant called name.
func maskByName(name string) (Mask, error) {
	for _, m := range masks {
		if m.Name == name {
			return m, nil
		}
	}
	var names []string
	for _, m := range masks {
		names = append(names, m.Name)
	}
	return Mask{}, fmt.Errorf("no mask %q (masks: %s)", name, strings.Join(names, ", "))
}

// softcap is attention-gym's soft cap value.
const softcap = 30

func causal(_, _, q, kv int) bool { return kv <= q }

var masks = []Mask{
	{"causal", func(workloads.KernelSpec) variant {
		return variant{title: "Causal Mask", mask: causal}
	}},
	{"alibi", func(s workloads.KernelSpec) variant {
		return variant{title: "Alibi Mod", mod: cpu.ScoreMod{ALiBi: ALiBiSlopes(s.Heads)}}
	}},
	{"sliding_window", func(s workloads.KernelSpec) variant {
		w := s.Window
		return variant{title: fmt.Sprintf("Sliding Window %d", w), mask: func(_, _, q, kv int) bool { return kv <= q && q-kv <= w }}
	}},
	{"prefix_lm", func(s workloads.KernelSpec) variant {
		n := s.PrefixLen
		return variant{title: fmt.Sprintf("Prefix Lm Causal %d", n), mask: func(_, _, q, kv int) bool { return kv <= n || kv <= q }}
	}},
	{"document", func(s workloads.KernelSpec) variant {
		docs := DocumentIDs(s)
		return variant{title: "Document Masking Causal Mask", perBatch: true, mask: func(b, _, q, kv int) bool {
			return kv <= q && docs[b][q] == docs[b][kv]
		}}
	}},
	{"softcap", func(workloads.KernelSpec) variant {
		return variant{title: fmt.Sprintf("Tanh Softcap %d", softcap), mod: cpu.ScoreMod{Softcap: softcap}}
	}},
	{"softcap_approx", func(workloads.KernelSpec) variant {
		return variant{title: fmt.Sprintf("Tanh Softcap Approx %d", softcap), mod: cpu.ScoreMod{Softcap: softcap, ApproxTanh: true}}
	}},
}

// ALiBiSlopes returns attention-gym's ALiBi slopes for heads heads: 2^(−8(h+1)/heads).
func ALiBiSlopes(heads int) []float32 {
	s := make([]float32, heads)
	for h := range s {
		s[h] = float32(math.Exp2(-8 * float64(h+1) / float64(heads)))
	}
	return s
}

// DocumentIDs returns, per batch, the document of every position: spec.Documents
// documents per sequence, each at least one position long, the rest of the positions
// dealt to documents uniformly at random (attention-gym's generate_random_lengths,
// seeded from spec.Seed and the batch; Go's generator, not Python's, so the lengths
// differ from attention-gym's, their distribution does not).
func DocumentIDs(spec workloads.KernelSpec) [][]int32 {
	out := make([][]int32, spec.Batch)
	for b := range out {
		rng := rand.New(rand.NewPCG(spec.Seed, uint64(b)+1))
		lengths := make([]int, spec.Documents)
		for i := range lengths {
			lengths[i] = 1
		}
		for range spec.SeqLen - spec.Documents {
			lengths[rng.IntN(spec.Documents)]++
		}
		ids := make([]int32, 0, spec.SeqLen)
		for d, n := range lengths {
			for range n {
				ids = append(ids, int32(d))
			}
		}
		out[b] = ids
	}
	return out
}
