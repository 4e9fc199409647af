// Package kernels is the compute contract of llmbench: tensor element types and their
// block formats (byte-identical to ggml's), their dequantize/quantize/dot-product
// reference code, and the small Backend interface that the engine computes through.
package kernels

import (
	"fmt"
	"strings"
)

// DType is a tensor element type, numbered exactly as ggml's enum ggml_type so that the
// numbers in GGUF tensor infos map onto it directly.
type DType uint32

// The element types llmbench knows. The numbers are ggml's.
const (
	F32    DType = 0
	F16    DType = 1
	Q4_0   DType = 2
	Q4_1   DType = 3
	Q5_0   DType = 6
	Q5_1   DType = 7
	Q8_0   DType = 8
	Q8_1   DType = 9
	Q2_K   DType = 10
	Q3_K   DType = 11
	Q4_K   DType = 12
	Q5_K   DType = 13
	Q6_K   DType = 14
	Q8_K   DType = 15
	IQ4_NL DType = 20
	IQ4_XS DType = 23
	I8     DType = 24
	I16    DType = 25
	I32    DType = 26
	I64    DType = 27
	F64    DType = 28
	BF16   DType = 30
	MXFP4  DType = 39
)

// Traits describes one element type: its block geometry and, where llmbench implements
// them, its conversions and its dot product. Function fields are nil when unsupported.
type Traits struct {
	Name       string
	BlockSize  int // elements per block
	BlockBytes int // bytes per block

	// ToFloat dequantizes len(dst) elements (a multiple of BlockSize) from src.
	ToFloat func(src []byte, dst []float32)
	// FromFloat quantizes len(src) elements (a multiple of BlockSize) into dst.
	FromFloat func(src []float32, dst []byte)
	// VecDotType is the type activations are converted to before VecDot.
	VecDotType DType
	// VecDot returns the dot product of n elements of weights w (this type) with n
	// elements of activations x (of type VecDotType).
	VecDot func(n int, w, x []byte) float32
}

// traits is the type table, indexed by DType (an array, not a map: the backends look
// types up on every matrix product, and a tiny model's decode step spent 3 % of its
// time in map lookups). Block geometry is filled here; the conversion and dot-product
// functions are filled by init functions in this package.
var traits = [...]*Traits{
	F32:    {Name: "F32", BlockSize: 1, BlockBytes: 4},
	F16:    {Name: "F16", BlockSize: 1, BlockBytes: 2},
	BF16:   {Name: "BF16", BlockSize: 1, BlockBytes: 2},
	Q4_0:   {Name: "Q4_0", BlockSize: 32, BlockBytes: 18},
	Q4_1:   {Name: "Q4_1", BlockSize: 32, BlockBytes: 20},
	Q5_0:   {Name: "Q5_0", BlockSize: 32, BlockBytes: 22},
	Q5_1:   {Name: "Q5_1", BlockSize: 32, BlockBytes: 24},
	Q8_0:   {Name: "Q8_0", BlockSize: 32, BlockBytes: 34},
	Q8_1:   {Name: "Q8_1", BlockSize: 32, BlockBytes: 36},
	Q2_K:   {Name: "Q2_K", BlockSize: 256, BlockBytes: 84},
	Q3_K:   {Name: "Q3_K", BlockSize: 256, BlockBytes: 110},
	Q4_K:   {Name: "Q4_K", BlockSize: 256, BlockBytes: 144},
	Q5_K:   {Name: "Q5_K", BlockSize: 256, BlockBytes: 176},
	Q6_K:   {Name: "Q6_K", BlockSize: 256, BlockBytes: 210},
	Q8_K:   {Name: "Q8_K", BlockSize: 256, BlockBytes: 292},
	IQ4_NL: {Name: "IQ4_NL", BlockSize: 32, BlockBytes: 18},
	IQ4_XS: {Name: "IQ4_XS", BlockSize: 256, BlockBytes: 136},
	MXFP4:  {Name: "MXFP4", BlockSize: 32, BlockBytes: 17},
	I8:     {Name: "I8", BlockSize: 1, BlockBytes: 1},
	I16:    {Name: "I16", BlockSize: 1, BlockBytes: 2},
	I32:    {Name: "I32", BlockSize: 1, BlockBytes: 4},
	I64:    {Name: "I64", BlockSize: 1, BlockBytes: 8},
	F64:    {Name: "F64", BlockSize: 1, BlockBytes: 8},
}

// TraitsOf returns the traits of t, or nil when t is not a type llmbench knows.
func TraitsOf(t DType) *Traits {
	if uint64(t) < uint64(len(traits)) {
		return traits[t]
	}
	return nil
}

// Known reports whether t is a type llmbench knows the block geometry of.
func (t DType) Known() bool { return TraitsOf(t) != nil }

// String returns ggml's name for t ("Q4_K"), or "type(N)" for an unknown type.
func (t DType) String() string {
	if tr := TraitsOf(t); tr != nil {
		return tr.Name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize returns the number of elements per block of t (0 if unknown).
func (t DType) BlockSize() int {
	if tr := TraitsOf(t); tr != nil {
		return tr.BlockSize
	}
	return 0
}

// BlockBytes returns the number of bytes per block of t (0 if unknown).
func (t DType) BlockBytes() int {
	if tr := TraitsOf(t); tr != nil {
		return tr.BlockBytes
	}
	return 0
}

// RowBytes returns the bytes that n elements of t occupy. n must be a multiple of the
// block size.
func (t DType) RowBytes(n int) (int, error) {
	tr := TraitsOf(t)
	if tr == nil {
		return 0, fmt.Errorf("unknown tensor type %d", uint32(t))
	}
	if n < 0 || n%tr.BlockSize != 0 {
		return 0, fmt.Errorf("%s: %d elements is not a multiple of the block size %d", tr.Name, n, tr.BlockSize)
	}
	return n / tr.BlockSize * tr.BlockBytes, nil
}

// ParseDType parses a type name such as "q4_k" or "F16" (case-insensitive).
func ParseDType(s string) (DType, error) {
	for t, tr := range traits {
		if tr != nil && strings.EqualFold(tr.Name, s) {
			return DType(t), nil
		}
	}
	return 0, fmt.Errorf("unknown tensor type %q", s)
}
