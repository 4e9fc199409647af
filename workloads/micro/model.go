package micro

import (
	"fmt"
	"math"
	"strings"

	"llmbench/engine"
	"llmbench/engine/gguf"
)

// modelFacts are the per-model figures a record carries.
type modelFacts struct {
	typ         string // "llama 1B Q4_0", as llama.cpp's model description
	size        uint64 // bytes of tensor data
	params      uint64
	weightBytes uint64  // read per generated token
	blockParams float64 // weights of the per-layer matmuls
	outParams   float64 // weights of the output projection
}

func describe(e *engine.Engine) modelFacts {
	f := modelFacts{weightBytes: WeightBytesPerToken(e.File)}
	for i := range e.File.Tensors {
		t := &e.File.Tensors[i]
		f.size += t.Size
		f.params += t.Elements()
		if strings.HasPrefix(t.Name, "blk.") && strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 && t.Shape[1] > 1 {
			f.blockParams += float64(t.Elements())
		}
	}
	m := e.Model
	f.outParams = float64(m.Vocab) * float64(m.Embd)
	f.typ = fmt.Sprintf("%s %s %s", m.Arch, sizeLabel(f.params), e.File.FileType())
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
