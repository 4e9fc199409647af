// Package gguf reads and writes GGUF files (versions 2 and 3), the model container of
// llama.cpp. The reader memory-maps the file and validates every count, offset and size
// against the file before using it, so hostile input yields an error rather than a panic
// or an allocation larger than the file. A model split in several files by llama.cpp's
// gguf-split opens from its first file (split.go).
package gguf

import (
	"fmt"
	"math"

	"llmbench/kernels"
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// DefaultAlignment is the tensor data alignment used when general.alignment is absent.
const DefaultAlignment = 32

// MaxDims is the most dimensions a tensor may have (ggml's GGML_MAX_DIMS).
const MaxDims = 4

// ValueType is the type tag of a metadata value.
type ValueType uint32

// The metadata value types of the GGUF format.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var typeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// String returns a short name for the type ("u32", "str", …).
func (t ValueType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// fixedSize returns the encoded size of a scalar of type t, or 0 for strings and arrays
// and -1 for unknown types.
func (t ValueType) fixedSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	case TypeString, TypeArray:
		return 0
	}
	return -1
}

// Value is one metadata value. Scalars hold the Go type of their tag (uint8 … float64,
// bool, string); arrays hold an Array.
type Value struct {
	Type ValueType
	V    any
}

// Array is an array metadata value: Values is a typed slice ([]uint8, []int32, []string,
// []bool, …) or, for nested arrays, []Array.
type Array struct {
	Elem   ValueType
	Values any
}

// Len returns the number of elements in the array.
func (a Array) Len() int {
	switch v := a.Values.(type) {
	case []uint8:
		return len(v)
	case []int8:
		return len(v)
	case []uint16:
		return len(v)
	case []int16:
		return len(v)
	case []uint32:
		return len(v)
	case []int32:
		return len(v)
	case []float32:
		return len(v)
	case []bool:
		return len(v)
	case []string:
		return len(v)
	case []uint64:
		return len(v)
	case []int64:
		return len(v)
	case []float64:
		return len(v)
	case []Array:
		return len(v)
	}
	return 0
}

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor: its name, element type, shape (ne[0] first, the row
// length) and where its data lies, relative to the start of the data section (of
// its part's file, for a split model).
type TensorInfo struct {
	Name   string
	Type   kernels.DType
	Shape  []uint64
	Offset uint64
	Size   uint64 // bytes

	part int // which file of a split model holds the data: 0 the first
}

// Elements returns the number of elements of the tensor.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rows returns the number of rows (all dimensions but the first).
func (t *TensorInfo) Rows() uint64 {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Elements() / max(t.Shape[0], 1)
}

// tensorBytes returns the byte size of a tensor of type typ and shape, checking that
// the row length fits the block size and that nothing overflows.
func tensorBytes(typ kernels.DType, shape []uint64) (uint64, error) {
	tr := kernels.TraitsOf(typ)
	if tr == nil {
		return 0, fmt.Errorf("unknown tensor type %d", uint32(typ))
	}
	n := uint64(1)
	for _, d := range shape {
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("shape %v overflows", shape)
		}
		n *= d
	}
	if len(shape) > 0 && shape[0]%uint64(tr.BlockSize) != 0 {
		return 0, fmt.Errorf("row length %d is not a multiple of %s's block size %d", shape[0], tr.Name, tr.BlockSize)
	}
	blocks := n / uint64(tr.BlockSize)
	if blocks > math.MaxInt64/uint64(tr.BlockBytes) {
		return 0, fmt.Errorf("shape %v overflows", shape)
	}
	return blocks * uint64(tr.BlockBytes), nil
}
