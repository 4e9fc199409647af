package micro

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"llmbench/engine"
	"llmbench/engine/gguf"
	"llmbench/engine/synth"
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
	for i := range e.File.Tensors {
		t := &e.File.Tensors[i]
		f.size += t.Size
		f.params += t.Elements()
		if strings.HasPrefix(t.Name, "blk.") && strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 && t.Shape[1] > 1 {
			f.blockParams += float64(t.Elements())
			if matBytes[t.Type] == 0 {
				f.matTypes = append(f.matTypes, t.Type)
			}
			matBytes[t.Type] += t.Size
		}
	}
	slices.SortStableFunc(f.matTypes, func(a, b kernels.DType) int { return cmp.Compare(matBytes[b], matBytes[a]) })
	m := e.Model
	f.outParams = float64(m.Vocab) * float64(m.Embd)
	var ftype string
	if id, ok := e.File.Uint("general.file_type"); ok {
		ftype = ftypeDesc(synth.FileTypeName(uint32(id)))
	} else {
		ftype = guessFtype(e.File)
	}
	f.typ = fmt.Sprintf("%s %s %s", m.Arch, sizeLabel(f.params), ftype)
	return f
}

// WeightBytesPerToken returns the bytes of weights one generated token reads: every
// tensor but token_embd, whose one row per token is negligible, unless the output
// projection is tied to it (no output.weight), when it is read whole.
func WeightBytesPerToken(f *gguf.File) uint64 {
	var n, embd uint64
	tied := true
	for i := range f.Tensors {
		t := &f.Tensors[i]
		switch t.Name {
		case "token_embd.weight":
			embd = t.Size
			continue
		case "output.weight":
			tied = false
		}
		n += t.Size
	}
	if tied {
		n += embd
	}
	return n
}

// guessFtype names a file without general.file_type after the commonest type of its
// matrices, marked "(guessed)" as llama.cpp does.
func guessFtype(f *gguf.File) string {
	count := map[kernels.DType]int{}
	var best kernels.DType
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Shape) < 2 || t.Shape[1] <= 1 {
			continue
		}
		count[t.Type]++
		if count[t.Type] > count[best] || count[t.Type] == count[best] && t.Type < best {
			best = t.Type
		}
	}
	name := best.String()
	if name == "F32" {
		name = "all F32"
	}
	return name + " (guessed)"
}

// ftypeDesc turns a llama-quantize name into llama.cpp's description ("Q4_K_M" →
// "Q4_K - Medium", "F32" → "all F32").
func ftypeDesc(name string) string {
	switch {
	case name == "F32":
		return "all F32"
	case name == "Q2_K":
		return "Q2_K - Medium"
	case strings.HasSuffix(name, "_K_S"):
		return strings.TrimSuffix(name, "_S") + " - Small"
	case strings.HasSuffix(name, "_K_M"):
		return strings.TrimSuffix(name, "_M") + " - Medium"
	case strings.HasSuffix(name, "_K_L"):
		return strings.TrimSuffix(name, "_L") + " - Large"
	}
	return name
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
