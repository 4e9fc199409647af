package synth

import (
	"fmt"
	"strings"

	"llmbench/kernels"
)

// FileType is a quantization mix as llama.cpp's llama-quantize names it ("Q4_K_M"): a
// base tensor type plus the rules that give some tensors more bits. ID is llama.cpp's
// enum llama_ftype, written as general.file_type.
type FileType struct {
	Name string
	ID   uint32
	Base kernels.DType
}

// fileTypes lists the mixes synth writes, numbered as llama.h's enum llama_ftype.
var fileTypes = []FileType{
	{"F32", 0, kernels.F32},
	{"F16", 1, kernels.F16},
	{"Q4_0", 2, kernels.Q4_0},
	{"Q4_1", 3, kernels.Q4_1},
	{"Q8_0", 7, kernels.Q8_0},
	{"Q5_0", 8, kernels.Q5_0},
	{"Q5_1", 9, kernels.Q5_1},
	{"Q2_K", 10, kernels.Q2_K},
	{"Q3_K_S", 11, kernels.Q3_K},
	{"Q3_K_M", 12, kernels.Q3_K},
	{"Q3_K_L", 13, kernels.Q3_K},
	{"Q4_K_S", 14, kernels.Q4_K},
	{"Q4_K_M", 15, kernels.Q4_K},
	{"Q5_K_S", 16, kernels.Q5_K},
	{"Q5_K_M", 17, kernels.Q5_K},
	{"Q6_K", 18, kernels.Q6_K},
	{"IQ4_NL", 25, kernels.IQ4_NL},
	{"IQ4_XS", 30, kernels.IQ4_XS},
	{"BF16", 32, kernels.BF16},
	{"MXFP4_MOE", 38, kernels.MXFP4},
}

// fileTypeAliases are llama-quantize's short names for the medium K mixes.
var fileTypeAliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// FileTypes returns the names ParseFileType accepts (aliases excluded).
func FileTypes() []string {
	out := make([]string, len(fileTypes))
	for i, f := range fileTypes {
		out[i] = f.Name
	}
	return out
}

// ParseFileType parses a mix name such as "q4_k_m" or "F16" (case-insensitive). As in
// llama-quantize, "Q4_K", "Q5_K" and "Q3_K" mean the _M mixes.
func ParseFileType(s string) (FileType, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if a, ok := fileTypeAliases[u]; ok {
		u = a
	}
	for _, f := range fileTypes {
		if f.Name == u {
			return f, nil
		}
	}
	return FileType{}, fmt.Errorf("synth: unknown type %q (known: %s)", s, strings.Join(FileTypes(), ", "))
}

// String returns the mix name.
func (f FileType) String() string { return f.Name }

// quantized reports whether the mix's base type is a block-quantized type (llama.cpp
// applies its per-tensor rules only then).
func (f FileType) quantized() bool {
	switch f.Base {
	case kernels.F32, kernels.F16, kernels.BF16:
		return false
	}
	return true
}

// tensorRole is the category of a weight tensor, as llama-quant.cpp's
// tensor_get_category sees it.
type tensorRole int

const (
	roleOther tensorRole = iota // norms, biases: never quantized
	roleTokenEmbd
	roleOutput
	roleAttnQ
	roleAttnK
	roleAttnV
	roleAttnOutput
	roleFFNGate
	roleFFNUp
	roleFFNDown
	roleRouter // ffn_gate_inp: llama-quantize never quantizes it; the converter writes F32
)

// useMoreBits is llama.cpp's use_more_bits rule: the first and last eighth of the layers,
// and every third layer in between, get more bits in the _M mixes.
func useMoreBits(layer, nLayers int) bool {
	return layer < nLayers/8 || layer >= 7*nLayers/8 || (layer-nLayers/8)%3 == 2
}

// tensorType picks the type of a weight tensor the way llama.cpp's quantizer does
// (src/llama-quant.cpp, llama_tensor_get_type with no imatrix, no overrides): the base
// type, raised for output.weight (and token_embd when embeddings are tied), for
// attn_v/ffn_down/attn_output by the mix's rules (and, in a model of exactly 8
// experts, attn_v and attn_k to Q8_0 and attn_output to Q5_K in the mixes llama.cpp
// names), then lowered to a compatible type when the row length is not a multiple of
// the block size. Norms, biases (roleOther) and the expert router are always F32.
// MXFP4_MOE (gpt-oss's release format) has its own rule: the experts MXFP4, the output
// and every other weight Q8_0.
// layer is the block index (attn_v and ffn_down, experts' included, are counted per
// layer).
func tensorType(f FileType, s Shape, role tensorRole, layer, rowLen int) kernels.DType {
	if role == roleOther || role == roleRouter {
		return kernels.F32
	}
	t := f.Base
	if !f.quantized() {
		return t
	}
	if f.Name == "MXFP4_MOE" { // llama-quant.cpp: expert stacks (ne[2] > 1) MXFP4, every other weight Q8_0
		t = kernels.Q8_0
		if s.Experts > 0 && (role == roleFFNGate || role == roleFFNUp || role == roleFFNDown) {
			t = kernels.MXFP4
		}
		return fallbackType(t, rowLen)
	}
	nl := s.Layers
	gqa := s.Heads / s.HeadsKV
	switch {
	case role == roleOutput || (s.Tied && role == roleTokenEmbd):
		if rowLen%t.BlockSize() != 0 {
			t = kernels.Q8_0
		} else if t != kernels.Q8_0 {
			t = kernels.Q6_K
		}
	case role == roleTokenEmbd:
		// Untied embeddings keep the base type.
	case role == roleAttnV:
		switch f.Name {
		case "Q2_K":
			t = kernels.Q3_K
			if gqa >= 4 {
				t = kernels.Q4_K
			}
		case "Q3_K_M":
			t = kernels.Q4_K
			if layer < 2 {
				t = kernels.Q5_K
			}
		case "Q3_K_L":
			t = kernels.Q5_K
		case "Q4_K_M", "Q5_K_M":
			if useMoreBits(layer, nl) {
				t = kernels.Q6_K
			}
		case "Q4_K_S":
			if layer < 4 {
				t = kernels.Q5_K
			}
		case "IQ4_NL", "IQ4_XS":
			if gqa >= 4 {
				t = kernels.Q5_K
			}
		}
		if s.Experts == 8 { // "for the 8-expert model, bumping this to Q8_0 trades just ~128MB"
			t = kernels.Q8_0
		}
	case role == roleAttnK:
		if s.Experts == 8 {
			t = kernels.Q8_0
		}
	case role == roleFFNDown:
		switch f.Name {
		case "Q2_K":
			t = kernels.Q3_K
		case "Q3_K_M":
			t = kernels.Q4_K
			if layer < nl/16 {
				t = kernels.Q5_K
			}
		case "Q3_K_L":
			t = kernels.Q5_K
		case "Q4_K_M", "Q5_K_M":
			if useMoreBits(layer, nl) {
				t = kernels.Q6_K
			}
		case "Q4_K_S", "IQ4_NL", "IQ4_XS": // the IQ4 rule: no importance matrix
			if layer < nl/8 {
				t = kernels.Q5_K
			}
		}
	case role == roleAttnOutput && s.Experts == 8:
		switch f.Name {
		case "Q2_K", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ4_XS":
			t = kernels.Q5_K
		}
	case role == roleAttnOutput:
		switch f.Name {
		case "Q2_K":
			t = kernels.Q3_K
		case "Q3_K_M":
			t = kernels.Q4_K
		case "Q3_K_L":
			t = kernels.Q5_K
		}
	}
	return fallbackType(t, rowLen)
}

// fallbackType is llama.cpp's tensor_type_fallback: a 256-element type on rows that are
// not a multiple of 256 becomes a 32-element type of similar size (IQ4_XS: IQ4_NL), and
// F16 when even that does not fit.
func fallbackType(t kernels.DType, rowLen int) kernels.DType {
	if rowLen%t.BlockSize() == 0 {
		return t
	}
	switch t {
	case kernels.Q2_K, kernels.Q3_K:
		t = kernels.Q4_0
	case kernels.Q4_K:
		t = kernels.Q5_0
	case kernels.Q5_K:
		t = kernels.Q5_1
	case kernels.Q6_K:
		t = kernels.Q8_0
	case kernels.IQ4_XS:
		t = kernels.IQ4_NL
	}
	if rowLen%t.BlockSize() != 0 {
		return kernels.F16
	}
	return t
}
