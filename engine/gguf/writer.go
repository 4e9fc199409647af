package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"llmbench/kernels"
)

// Writer writes a GGUF v3 file in one pass: declare metadata and tensors, write the
// header, then stream each tensor's bytes in declaration order. Nothing but the header
// is held in memory, so arbitrarily large models can be written.
type Writer struct {
	w         *bufio.Writer
	kv        []KV
	tensors   []TensorInfo
	alignment uint64
	header    bool
	off       uint64 // bytes written since the start of the file
	dataStart uint64
	cur       int    // index of the tensor being written, -1 before the first
	curN      uint64 // bytes written of the current tensor
	err       error
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<20), alignment: DefaultAlignment, cur: -1}
}

// AddKV adds a metadata pair. v may be any scalar Go type the format has (uint8 …
// float64, bool, string), a typed slice of those ([]string, []float32, []int32, …), an
// Array, or a Value. general.alignment, when given as an integer, sets the alignment.
func (w *Writer) AddKV(key string, v any) {
	if w.err != nil {
		return
	}
	if w.header {
		w.err = errors.New("gguf: AddKV after WriteHeader")
		return
	}
	val, err := toValue(v)
	if err != nil {
		w.err = fmt.Errorf("gguf: key %q: %w", key, err)
		return
	}
	if key == "general.alignment" {
		switch a := val.V.(type) {
		case uint32:
			w.alignment = uint64(a)
		case uint64:
			w.alignment = a
		}
		if w.alignment == 0 || w.alignment&(w.alignment-1) != 0 {
			w.err = fmt.Errorf("gguf: alignment %d is not a power of two", w.alignment)
			return
		}
	}
	w.kv = append(w.kv, KV{Key: key, Value: val})
}

// AddTensor declares a tensor; its data is written later with BeginTensor, in the
// order the tensors were added. shape lists ne[0] (the row length) first.
func (w *Writer) AddTensor(name string, typ kernels.DType, shape ...uint64) {
	if w.err != nil {
		return
	}
	if w.header {
		w.err = errors.New("gguf: AddTensor after WriteHeader")
		return
	}
	if len(shape) == 0 || len(shape) > MaxDims {
		w.err = fmt.Errorf("gguf: tensor %q: %d dimensions (want 1..%d)", name, len(shape), MaxDims)
		return
	}
	size, err := tensorBytes(typ, shape)
	if err != nil {
		w.err = fmt.Errorf("gguf: tensor %q: %w", name, err)
		return
	}
	var off uint64
	if n := len(w.tensors); n > 0 {
		last := w.tensors[n-1]
		off = alignUp(last.Offset+last.Size, w.alignment)
	}
	w.tensors = append(w.tensors, TensorInfo{Name: name, Type: typ, Shape: append([]uint64(nil), shape...), Offset: off, Size: size})
}

// Size returns the total size of the file once written (valid after all AddKV and
// AddTensor calls), so callers can check free space before writing.
func (w *Writer) Size() uint64 {
	n := uint64(4 + 4 + 8 + 8)
	for _, kv := range w.kv {
		n += 8 + uint64(len(kv.Key)) + 4 + valueSize(kv.Value)
	}
	for _, t := range w.tensors {
		n += 8 + uint64(len(t.Name)) + 4 + 8*uint64(len(t.Shape)) + 4 + 8
	}
	n = alignUp(n, w.alignment)
	if k := len(w.tensors); k > 0 {
		last := w.tensors[k-1]
		n += last.Offset + last.Size
	}
	return n
}

func valueSize(v Value) uint64 {
	switch x := v.V.(type) {
	case string:
		return 8 + uint64(len(x))
	case Array:
		return arraySize(x)
	}
	return uint64(v.Type.fixedSize())
}

func arraySize(a Array) uint64 {
	n := uint64(4 + 8)
	switch s := a.Values.(type) {
	case []string:
		for _, x := range s {
			n += 8 + uint64(len(x))
		}
	case []Array:
		for _, x := range s {
			n += arraySize(x)
		}
	default:
		n += uint64(a.Len()) * uint64(a.Elem.fixedSize())
	}
	return n
}

// WriteHeader writes the magic, metadata and tensor infos and pads to the data section.
func (w *Writer) WriteHeader() error {
	if w.err != nil {
		return w.err
	}
	if w.header {
		return errors.New("gguf: WriteHeader called twice")
	}
	w.header = true
	w.raw([]byte(Magic))
	w.u32(3)
	w.u64(uint64(len(w.tensors)))
	w.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		w.str(kv.Key)
		w.u32(uint32(kv.Value.Type))
		w.value(kv.Value)
	}
	for _, t := range w.tensors {
		w.str(t.Name)
		w.u32(uint32(len(t.Shape)))
		for _, d := range t.Shape {
			w.u64(d)
		}
		w.u32(uint32(t.Type))
		w.u64(t.Offset)
	}
	w.pad()
	w.dataStart = w.off
	return w.err
}

// Flush hands what the writer buffers to the underlying writer: after WriteHeader,
// the whole header (a metadata-only file).
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// BeginTensor finishes the previous tensor and returns a writer for the bytes of the
// named tensor, which must be the next one declared. Exactly its size must be written.
func (w *Writer) BeginTensor(name string) (io.Writer, error) {
	if err := w.endTensor(); err != nil {
		return nil, err
	}
	if !w.header {
		return nil, errors.New("gguf: BeginTensor before WriteHeader")
	}
	w.cur++
	if w.cur >= len(w.tensors) {
		return nil, fmt.Errorf("gguf: tensor %q was not declared (all %d written)", name, len(w.tensors))
	}
	if t := w.tensors[w.cur]; t.Name != name {
		return nil, fmt.Errorf("gguf: tensor %q written out of order: %q is next", name, t.Name)
	}
	w.pad()
	w.curN = 0
	return tensorWriter{w}, w.err
}

type tensorWriter struct{ w *Writer }

func (t tensorWriter) Write(p []byte) (int, error) {
	w := t.w
	if w.err != nil {
		return 0, w.err
	}
	if size := w.tensors[w.cur].Size; w.curN+uint64(len(p)) > size {
		w.err = fmt.Errorf("gguf: tensor %q: more than its %d bytes written", w.tensors[w.cur].Name, size)
		return 0, w.err
	}
	w.raw(p)
	w.curN += uint64(len(p))
	return len(p), w.err
}

func (w *Writer) endTensor() error {
	if w.err != nil {
		return w.err
	}
	if w.cur >= 0 && w.cur < len(w.tensors) {
		if t := w.tensors[w.cur]; w.curN != t.Size {
			w.err = fmt.Errorf("gguf: tensor %q: %d of its %d bytes written", t.Name, w.curN, t.Size)
		}
	}
	return w.err
}

// Close checks that every declared tensor was written in full and flushes. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if !w.header {
		if err := w.WriteHeader(); err != nil {
			return err
		}
	}
	if err := w.endTensor(); err != nil {
		return err
	}
	if w.cur+1 != len(w.tensors) {
		return fmt.Errorf("gguf: %d of %d tensors written", w.cur+1, len(w.tensors))
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// Written returns the bytes written so far, header included (some may still sit in
// the Writer's buffer until Close); it reaches Size when the last tensor is written.
func (w *Writer) Written() uint64 { return w.off }

func (w *Writer) raw(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(p)
	w.off += uint64(n)
	if err != nil {
		w.err = fmt.Errorf("gguf: write: %w", err)
	}
}

var zeros [4096]byte

func (w *Writer) pad() {
	if n := alignUp(w.off, w.alignment) - w.off; n > 0 {
		w.raw(zeros[:n])
	}
}

func (w *Writer) u32(x uint32) { w.raw(binary.LittleEndian.AppendUint32(nil, x)) }
func (w *Writer) u64(x uint64) { w.raw(binary.LittleEndian.AppendUint64(nil, x)) }
func (w *Writer) str(s string) { w.u64(uint64(len(s))); w.raw([]byte(s)) }

func (w *Writer) scalar(v any) {
	var b [8]byte
	switch x := v.(type) {
	case uint8:
		w.raw([]byte{x})
	case int8:
		w.raw([]byte{byte(x)})
	case bool:
		if x {
			w.raw([]byte{1})
		} else {
			w.raw([]byte{0})
		}
	case uint16:
		binary.LittleEndian.PutUint16(b[:], x)
		w.raw(b[:2])
	case int16:
		binary.LittleEndian.PutUint16(b[:], uint16(x))
		w.raw(b[:2])
	case uint32:
		w.u32(x)
	case int32:
		w.u32(uint32(x))
	case float32:
		w.u32(math.Float32bits(x))
	case uint64:
		w.u64(x)
	case int64:
		w.u64(uint64(x))
	case float64:
		w.u64(math.Float64bits(x))
	case string:
		w.str(x)
	}
}

func (w *Writer) value(v Value) {
	if a, ok := v.V.(Array); ok {
		w.array(a)
		return
	}
	w.scalar(v.V)
}

func (w *Writer) array(a Array) {
	w.u32(uint32(a.Elem))
	w.u64(uint64(a.Len()))
	forEach(a.Values, func(x any) {
		if sub, ok := x.(Array); ok {
			w.array(sub)
		} else {
			w.scalar(x)
		}
	})
}

func forEach(values any, f func(any)) {
	switch s := values.(type) {
	case []uint8:
		each(s, f)
	case []int8:
		each(s, f)
	case []uint16:
		each(s, f)
	case []int16:
		each(s, f)
	case []uint32:
		each(s, f)
	case []int32:
		each(s, f)
	case []float32:
		each(s, f)
	case []bool:
		each(s, f)
	case []string:
		each(s, f)
	case []uint64:
		each(s, f)
	case []int64:
		each(s, f)
	case []float64:
		each(s, f)
	case []Array:
		each(s, f)
	}
}

func each[T any](s []T, f func(any)) {
	for _, x := range s {
		f(x)
	}
}

// scalarType maps a Go scalar to its value type.
func scalarType(v any) (ValueType, bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, true
	case int8:
		return TypeInt8, true
	case uint16:
		return TypeUint16, true
	case int16:
		return TypeInt16, true
	case uint32:
		return TypeUint32, true
	case int32:
		return TypeInt32, true
	case float32:
		return TypeFloat32, true
	case bool:
		return TypeBool, true
	case string:
		return TypeString, true
	case uint64:
		return TypeUint64, true
	case int64:
		return TypeInt64, true
	case float64:
		return TypeFloat64, true
	}
	return 0, false
}

func toValue(v any) (Value, error) {
	switch x := v.(type) {
	case Value:
		return x, nil
	case Array:
		return Value{Type: TypeArray, V: x}, nil
	case int:
		return Value{}, errors.New("plain int has no GGUF type: use int32, uint32, int64 or uint64")
	}
	if t, ok := scalarType(v); ok {
		return Value{Type: t, V: v}, nil
	}
	elem, ok := sliceElem(v)
	if !ok {
		return Value{}, fmt.Errorf("unsupported value type %T", v)
	}
	return Value{Type: TypeArray, V: Array{Elem: elem, Values: v}}, nil
}

func sliceElem(v any) (ValueType, bool) {
	switch v.(type) {
	case []uint8:
		return TypeUint8, true
	case []int8:
		return TypeInt8, true
	case []uint16:
		return TypeUint16, true
	case []int16:
		return TypeInt16, true
	case []uint32:
		return TypeUint32, true
	case []int32:
		return TypeInt32, true
	case []float32:
		return TypeFloat32, true
	case []bool:
		return TypeBool, true
	case []string:
		return TypeString, true
	case []uint64:
		return TypeUint64, true
	case []int64:
		return TypeInt64, true
	case []float64:
		return TypeFloat64, true
	case []Array:
		return TypeArray, true
	}
	return 0, false
}
