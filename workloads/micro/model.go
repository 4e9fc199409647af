package micro

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"llmbench/engine"
	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// modelFacts are the per-model figures a record carries.
type modelFacts struct {
	typ         string // "llama 1B Q4_0", as llama.cpp's model description
	size        uint64 // bytes of tensor data
	params      uint64
	weightBytes uint64          // read per generated token
	blockParams float64         // weights of the per-layer matmuls
	outParams   float64         // weights of the output projection
	matTypes    []kernels.DType // types of the per-layer matrices, most bytes first
}

func describe(e *engine.Engine) modelFacts {
	f := modelFacts{weightBytes: WeightBytesPerToken(e.File)}
	matBytes := map[kernels.DType]uint64{}
	experts, used := expertCounts(e.File)
	for i := range e.File.Tensors {
		t := &e.File.Tensors[i]
		f.size += t.Size
		f.params += t.Elements()
		if strings.HasPrefix(t.Name, "blk.") && strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 && t.Shape[1] > 1 {
			f.blockParams += float64(activeShare(t, t.Elements(), experts, used)) // a token multiplies its experts only
			if matBytes[t.Type] == 0 {
				f.matTypes = append(f.matTypes, t.Type)
			}
			matBytes[t.Type] += t.Size
		}
	}
	slices.SortStableFunc(f.matTypes, func(a, b kernels.DType) int { return cmp.Compare(matBytes[b], matBytes[a]) })
	m := e.Model
	f.outParams = float64(m.Vocab) * float64(m.Embd)
	f.typ = fmt.Sprintf("%s %s %s", m.Arch, sizeLabel(f.params), e.File.FileType())
	return f
}

// WeightBytesPerToken returns the bytes of weights one generated token reads: every
// tensor but token_embd, whose one row per token is negligible, unless the output
// projection is tied to it (no output.weight), when it is read whole. In a
// mixture-of-experts model a token reads only the experts it is routed to: each 3-D
// expert tensor counts for <arch>.expert_used_count of its <arch>.expert_count experts.
func WeightBytesPerToken(f *gguf.File) uint64 {
	var n, embd uint64
	tied := true
	experts, used := expertCounts(f)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		switch t.Name {
		case "token_embd.weight":
			embd = t.Size
			continue
		case "output.weight":
			tied = false
		}
		n += activeShare(t, t.Size, experts, used)
	}
	if tied {
		n += embd
	}
	return n
}

// expertCounts returns a mixture-of-experts model's <arch>.expert_count and
// <arch>.expert_used_count, or zeros for a dense model (or counts that do not fit).
func expertCounts(f *gguf.File) (experts, used uint64) {
	arch := f.Architecture()
	experts, _ = f.Uint(arch + ".expert_count")
	used, _ = f.Uint(arch + ".expert_used_count")
	if experts == 0 || used == 0 || used > experts {
		return 0, 0
	}
	return experts, used
}

// activeShare returns the part of v (a tensor's bytes or elements) that one token
// uses: used/experts of it for a 3-D tensor of experts stacked along its last
// dimension, all of it otherwise.
func activeShare(t *gguf.TensorInfo, v, experts, used uint64) uint64 {
	if experts > 0 && len(t.Shape) == 3 && t.Shape[2] == experts {
		return v / experts * used
	}
	return v
}

// sizeLabel approximates llama.cpp's model size class from the parameter count:
// "7B" for 6.74 B, "0.5B" for 494 M, "?B" below 100 M (llama.cpp's unknown).
func sizeLabel(params uint64) string {
	p := float64(params)
	switch {
	case p >= 1e9:
		return fmt.Sprintf("%.0fB", math.Round(p/1e9))
	case p >= 1e8:
		return fmt.Sprintf("%.1fB", math.Round(p/1e8)/10)
	}
	return "?B"
}

// flops returns the floating-point operations of evaluating n tokens starting at
// position start in forward passes of at most ubatch tokens, logits of the last token
// of each pass only: 2 per weight per token for the layer matmuls, 2 per output weight
// per pass, and 4·heads·head_dim per cached key per layer for attention (QKᵀ and AV).
func flops(e *engine.Engine, f modelFacts, start, n, batch, ubatch int) float64 {
	if n <= 0 {
		return 0
	}
	m := e.Model
	total := 2 * f.blockParams * float64(n)
	passes := 0
	for done := 0; done < n; {
		chunk := min(batch, n-done)
		passes += (chunk + ubatch - 1) / ubatch
		done += chunk
	}
	total += 2 * f.outParams * float64(passes)
	// Σ over positions p = start … start+n−1 of (p+1) keys.
	keys := float64(n)*float64(start) + float64(n)*float64(n+1)/2
	total += 4 * float64(m.Heads) * float64(m.HeadDim) * float64(m.Layers) * keys
	return total
}
