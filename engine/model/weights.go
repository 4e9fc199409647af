package model

import (
	"fmt"
	"unsafe"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// loader fetches tensors by name, checks their shapes and collects the first error.
type loader struct {
	f   *gguf.File
	err error
}

func (l *loader) fail(format string, args ...any) {
	if l.err == nil {
		l.err = fmt.Errorf("model: "+format, args...)
	}
}

// matrix returns a rows×cols weight matrix (GGUF shape [cols, rows]).
func (l *loader) matrix(name string, cols, rows int) *kernels.Matrix {
	t, ok := l.f.Tensor(name)
	if !ok {
		l.fail("tensor %q is missing", name)
		return nil
	}
	if len(t.Shape) != 2 || t.Shape[0] != uint64(cols) || t.Shape[1] != uint64(rows) {
		l.fail("tensor %q has shape %v, want [%d %d]", name, t.Shape, cols, rows)
		return nil
	}
	if tr := kernels.TraitsOf(t.Type); tr == nil || tr.VecDot == nil || tr.ToFloat == nil {
		l.fail("tensor %q: type %s is not supported for matrix products", name, t.Type)
		return nil
	}
	return &kernels.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: l.f.TensorData(t)}
}

// optionalMatrix is matrix for tensors that may be absent.
func (l *loader) optionalMatrix(name string, cols, rows int) *kernels.Matrix {
	if _, ok := l.f.Tensor(name); !ok {
		return nil
	}
	return l.matrix(name, cols, rows)
}

// vector returns a 1-D tensor of n values as float32 (F32 in place, others converted).
func (l *loader) vector(name string, n int, optional bool) []float32 {
	t, ok := l.f.Tensor(name)
	if !ok {
		if !optional {
			l.fail("tensor %q is missing", name)
		}
		return nil
	}
	if t.Elements() != uint64(n) {
		l.fail("tensor %q has %d elements, want %d", name, t.Elements(), n)
		return nil
	}
	data := l.f.TensorData(t)
	if t.Type == kernels.F32 && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(data))), n)
	}
	tr := kernels.TraitsOf(t.Type)
	if tr == nil || tr.ToFloat == nil {
		l.fail("tensor %q: type %s cannot be converted", name, t.Type)
		return nil
	}
	out := make([]float32, n)
	tr.ToFloat(data, out)
	return out
}

// experts returns the n matrices of rows×cols that a 3-D expert tensor (GGUF shape
// [cols, rows, n], llama.cpp's ffn_*_exps) stacks, expert e's rows after expert e-1's:
// each is a view of its slice of the file's data, nothing copied.
func (l *loader) experts(name string, cols, rows, n int) []*kernels.Matrix {
	t, ok := l.f.Tensor(name)
	if !ok {
		l.fail("tensor %q is missing", name)
		return nil
	}
	if len(t.Shape) != 3 || t.Shape[0] != uint64(cols) || t.Shape[1] != uint64(rows) || t.Shape[2] != uint64(n) {
		l.fail("tensor %q has shape %v, want [%d %d %d]", name, t.Shape, cols, rows, n)
		return nil
	}
	tr := kernels.TraitsOf(t.Type)
	if tr == nil || tr.VecDot == nil || tr.ToFloat == nil {
		l.fail("tensor %q: type %s is not supported for matrix products", name, t.Type)
		return nil
	}
	if cols%tr.BlockSize != 0 {
		l.fail("tensor %q: rows of %d are not whole %s blocks", name, cols, t.Type)
		return nil
	}
	data := l.f.TensorData(t)
	size := rows * (cols / tr.BlockSize * tr.BlockBytes)
	if len(data) != n*size {
		l.fail("tensor %q holds %d bytes, want %d", name, len(data), n*size)
		return nil
	}
	out := make([]*kernels.Matrix, n)
	for e := range out {
		out[e] = &kernels.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: data[e*size : (e+1)*size : (e+1)*size]}
	}
	return out
}

// expertBias returns the n bias vectors of size each that a 2-D expert bias tensor
// (GGUF shape [size, n], gpt-oss's ffn_*_exps.bias) holds, one per expert.
func (l *loader) expertBias(name string, size, n int) [][]float32 {
	all := l.vector(name, size*n, false)
	if all == nil {
		return nil
	}
	out := make([][]float32, n)
	for e := range out {
		out[e] = all[e*size : (e+1)*size : (e+1)*size]
	}
	return out
}
