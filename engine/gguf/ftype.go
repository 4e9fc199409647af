package gguf

import (
	"fmt"

	"llmbench/kernels"
)

// FileTypeGuessed is the bit llama.cpp sets on a file type it guessed from the
// tensors because the file has no general.file_type (LLAMA_FTYPE_GUESSED).
const FileTypeGuessed = 1024

// fileTypeNames are llama.cpp's descriptions of its file types (llama.h's enum
// llama_ftype, as llama_model_ftype_name prints them), by general.file_type value.
var fileTypeNames = map[uint32]string{
	0:  "all F32",
	1:  "F16",
	2:  "Q4_0",
	3:  "Q4_1",
	7:  "Q8_0",
	8:  "Q5_0",
	9:  "Q5_1",
	10: "Q2_K - Medium",
	11: "Q3_K - Small",
	12: "Q3_K - Medium",
	13: "Q3_K - Large",
	14: "Q4_K - Small",
	15: "Q4_K - Medium",
	16: "Q5_K - Small",
	17: "Q5_K - Medium",
	18: "Q6_K",
	19: "IQ2_XXS - 2.0625 bpw",
	20: "IQ2_XS - 2.3125 bpw",
	21: "Q2_K - Small",
	22: "IQ3_XS - 3.3 bpw",
	23: "IQ3_XXS - 3.0625 bpw",
	24: "IQ1_S - 1.5625 bpw",
	25: "IQ4_NL - 4.5 bpw",
	26: "IQ3_S - 3.4375 bpw",
	27: "IQ3_S mix - 3.66 bpw",
	28: "IQ2_S - 2.5 bpw",
	29: "IQ2_M - 2.7 bpw",
	30: "IQ4_XS - 4.25 bpw",
	31: "IQ1_M - 1.75 bpw",
	32: "BF16",
	36: "TQ1_0 - 1.69 bpw ternary",
	37: "TQ2_0 - 2.06 bpw ternary",
	38: "MXFP4 MoE",
}

// FileTypeName returns llama.cpp's description of a general.file_type value
// ("Q4_K - Medium" for 15), with " (guessed)" when the FileTypeGuessed bit is set,
// or "unknown (N)".
func FileTypeName(id uint32) string {
	if id&FileTypeGuessed != 0 {
		return FileTypeName(id&^FileTypeGuessed) + " (guessed)"
	}
	if s, ok := fileTypeNames[id]; ok {
		return s
	}
	return fmt.Sprintf("unknown (%d)", id)
}

// FileType describes the file's quantization as llama.cpp does: from
// general.file_type when present, else guessed from the commonest type of its
// matrices and marked "(guessed)"; "" when there is neither.
func (f *File) FileType() string {
	if id, ok := f.Uint("general.file_type"); ok && id <= 1<<31 {
		return FileTypeName(uint32(id))
	}
	count := map[kernels.DType]int{}
	var best kernels.DType
	found := false
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if len(t.Shape) < 2 || t.Shape[1] <= 1 {
			continue
		}
		count[t.Type]++
		if !found || count[t.Type] > count[best] || count[t.Type] == count[best] && t.Type < best {
			best, found = t.Type, true
		}
	}
	if !found {
		return ""
	}
	name := best.String()
	if best == kernels.F32 {
		name = "all F32"
	}
	return name + " (guessed)"
}
