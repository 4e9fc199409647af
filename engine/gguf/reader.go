package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"llmbench/kernels"
)

// maxNesting bounds how deeply arrays may nest inside arrays.
const maxNesting = 8

// File is a parsed GGUF file. Tensor data is served from a read-only memory map (or
// from the byte slice given to Parse).
type File struct {
	Version   uint32
	KV        []KV
	Tensors   []TensorInfo
	Alignment uint64
	// DataOffset is the file offset at which the tensor data section begins.
	DataOffset uint64
	// FileSize is the size of the file in bytes.
	FileSize uint64

	data    []byte // whole file
	mapped  bool
	parts   []*File // the other parts of a split model, in order; nil otherwise
	kvIndex map[string]int
	tIndex  map[string]int
}

// Open memory-maps and parses the GGUF file at path. When it is the first part of a
// split model (split.count > 1), the other parts are found beside it by llama.cpp's
// names (SplitPath), checked and mapped too: the File then has every part's tensors
// and the first part's metadata. Every error is a *FileError naming the file (the part) at fault.
func Open(path string) (*File, error) { return open(path, false, true) }

// OpenHeader is Open for listing files: the header is parsed and checked as Open
// does, but the contents of array values (a vocabulary's tokens and merges) are
// skipped rather than kept, so reading a model with a large vocabulary costs no
// allocation per token. Array values of the returned File have no elements. The parts
// of a split model are opened and checked as Open does.
func OpenHeader(path string) (*File, error) { return open(path, true, true) }

// ReadFile is Open with the file (every part of a split model) read into memory
// rather than mapped, as llama.cpp loads with --no-mmap.
func ReadFile(path string) (*File, error) { return open(path, false, false) }

// open opens the model at path, its parts included.
func open(path string, skipArrays, mmap bool) (*File, error) {
	f, err := openOne(path, skipArrays, mmap)
	if err != nil {
		return nil, err
	}
	if err := f.openParts(path, func(p string) (*File, error) { return openOne(p, skipArrays, mmap) }); err != nil {
		f.Close()
		if _, ok := err.(*FileError); ok {
			return nil, err
		}
		return nil, &FileError{Path: path, Err: err}
	}
	return f, nil
}

// openOne maps (or reads) and parses the one file at path; its errors are
// *FileErrors.
func openOne(path string, skipArrays, mmap bool) (*File, error) {
	fail := func(err error) (*File, error) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the FileError names the file
		}
		return nil, &FileError{Path: path, Err: err}
	}
	var data []byte
	if mmap {
		fd, err := os.Open(path)
		if err != nil {
			return fail(err)
		}
		defer fd.Close()
		st, err := fd.Stat()
		if err != nil {
			return fail(err)
		}
		if !st.Mode().IsRegular() {
			return fail(errors.New("not a regular file"))
		}
		size := st.Size()
		if size < 4 {
			return fail(fmt.Errorf("file is %d bytes, too short to be GGUF", size))
		}
		if size > math.MaxInt {
			return fail(errors.New("file too large to map"))
		}
		if data, err = mapFile(fd, int(size)); err != nil {
			return fail(fmt.Errorf("mmap: %w", err))
		}
	} else {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return fail(err)
		}
	}
	f, err := parse(data, skipArrays)
	if err != nil {
		if mmap {
			unmapFile(data)
		}
		return fail(err)
	}
	f.mapped = mmap
	return f, nil
}

// Parse parses a GGUF file held in memory. The File keeps referring to data. A part
// of a model split in several files is refused: ParseParts takes them all.
func Parse(data []byte) (*File, error) {
	f, err := parse(data, false)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if n, _ := f.Uint(KeySplitCount); n > 1 {
		return nil, fmt.Errorf("gguf: one part of a split model in %d parts (ParseParts takes them all)", n)
	}
	return f, nil
}

// Close releases the memory maps (every part's). Tensor data slices must not be used
// afterwards.
func (f *File) Close() error {
	var errs []error
	for _, p := range f.parts {
		errs = append(errs, p.Close())
	}
	f.parts = nil
	if f.mapped && f.data != nil {
		errs = append(errs, unmapFile(f.data))
	}
	f.data = nil
	return errors.Join(errs...)
}

// Release tells the system that b, a part of a tensor's data (TensorData), will not
// be read soon: the whole memory pages inside b leave the process's resident memory,
// and are read back from the file if b is touched again. It does nothing for a File
// made by Parse (whose bytes belong to the caller) or where files are not mapped.
func (f *File) Release(b []byte) error {
	if !f.mapped || len(b) == 0 {
		return nil
	}
	inside := func(g *File) bool {
		p, d := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(g.data)))
		return p >= d && p+uintptr(len(b)) <= d+uintptr(len(g.data))
	}
	if !inside(f) && !slices.ContainsFunc(f.parts, inside) {
		return errors.New("gguf: Release of bytes outside the file's mapping")
	}
	if err := releasePages(b); err != nil {
		return fmt.Errorf("gguf: release pages: %w", err)
	}
	return nil
}

// ErrTruncated reports that the file ended before a structure it declares.
var ErrTruncated = errors.New("file is truncated")

type decoder struct {
	b          []byte
	off        uint64
	err        error
	skipArrays bool // check array values but keep none of their elements
}

func (d *decoder) remaining() uint64 { return uint64(len(d.b)) - d.off }

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.remaining() {
		d.err = fmt.Errorf("at byte %d: need %d bytes, %d left: %w", d.off, n, d.remaining(), ErrTruncated)
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) u8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}
func (d *decoder) u16() uint16 {
	if p := d.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}
func (d *decoder) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}
func (d *decoder) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) str() string {
	n := d.u64()
	if d.err != nil {
		return ""
	}
	if n > d.remaining() {
		d.fail("at byte %d: string of %d bytes, only %d left: %w", d.off, n, d.remaining(), ErrTruncated)
		return ""
	}
	return string(d.take(n))
}

// checkCount verifies that count elements of at least minSize bytes each can fit in
// what is left of the file, so no allocation is ever larger than the file.
func (d *decoder) checkCount(what string, count uint64, minSize uint64) bool {
	if d.err != nil {
		return false
	}
	if minSize == 0 {
		minSize = 1
	}
	if count > d.remaining()/minSize {
		d.fail("%s count %d cannot fit in the %d bytes left of the file", what, count, d.remaining())
		return false
	}
	return true
}

func (d *decoder) scalar(t ValueType) any {
	switch t {
	case TypeUint8:
		return d.u8()
	case TypeInt8:
		return int8(d.u8())
	case TypeUint16:
		return d.u16()
	case TypeInt16:
		return int16(d.u16())
	case TypeUint32:
		return d.u32()
	case TypeInt32:
		return int32(d.u32())
	case TypeFloat32:
		return math.Float32frombits(d.u32())
	case TypeBool:
		b := d.u8()
		if b > 1 {
			d.fail("at byte %d: bool value %d is neither 0 nor 1", d.off-1, b)
		}
		return b == 1
	case TypeString:
		return d.str()
	case TypeUint64:
		return d.u64()
	case TypeInt64:
		return int64(d.u64())
	case TypeFloat64:
		return math.Float64frombits(d.u64())
	}
	d.fail("unknown value type %d", uint32(t))
	return nil
}

func (d *decoder) value(t ValueType, depth int) Value {
	if t == TypeArray {
		return Value{Type: TypeArray, V: d.array(depth)}
	}
	return Value{Type: t, V: d.scalar(t)}
}

func (d *decoder) array(depth int) Array {
	if depth >= maxNesting {
		d.fail("arrays nested deeper than %d", maxNesting)
		return Array{}
	}
	elem := ValueType(d.u32())
	n := d.u64()
	if d.err != nil {
		return Array{}
	}
	size := elem.fixedSize()
	switch {
	case size < 0:
		d.fail("array of unknown value type %d", uint32(elem))
		return Array{}
	case elem == TypeString:
		size = 8
	case elem == TypeArray:
		size = 12
	}
	if !d.checkCount("array element", n, uint64(size)) {
		return Array{}
	}
	a := Array{Elem: elem}
	if d.skipArrays {
		d.skipArray(elem, n, depth)
		return a
	}
	switch elem {
	case TypeUint8:
		a.Values = append([]uint8(nil), d.take(n)...)
	case TypeInt8:
		v := make([]int8, n)
		for i, b := range d.take(n) {
			v[i] = int8(b)
		}
		a.Values = v
	case TypeUint16:
		a.Values = readSlice(d, n, func(d *decoder) uint16 { return d.u16() })
	case TypeInt16:
		a.Values = readSlice(d, n, func(d *decoder) int16 { return int16(d.u16()) })
	case TypeUint32:
		a.Values = readSlice(d, n, func(d *decoder) uint32 { return d.u32() })
	case TypeInt32:
		a.Values = readSlice(d, n, func(d *decoder) int32 { return int32(d.u32()) })
	case TypeFloat32:
		a.Values = readSlice(d, n, func(d *decoder) float32 { return math.Float32frombits(d.u32()) })
	case TypeUint64:
		a.Values = readSlice(d, n, func(d *decoder) uint64 { return d.u64() })
	case TypeInt64:
		a.Values = readSlice(d, n, func(d *decoder) int64 { return int64(d.u64()) })
	case TypeFloat64:
		a.Values = readSlice(d, n, func(d *decoder) float64 { return math.Float64frombits(d.u64()) })
	case TypeBool:
		a.Values = readSlice(d, n, func(d *decoder) bool { return d.scalar(TypeBool).(bool) })
	case TypeString:
		a.Values = readSlice(d, n, func(d *decoder) string { return d.str() })
	case TypeArray:
		a.Values = readSlice(d, n, func(d *decoder) Array { return d.array(depth + 1) })
	}
	return a
}

// skipArray moves past n elements of type elem, checking them as array does.
func (d *decoder) skipArray(elem ValueType, n uint64, depth int) {
	switch elem {
	case TypeString:
		for i := uint64(0); i < n && d.err == nil; i++ {
			d.take(d.u64())
		}
	case TypeArray:
		for i := uint64(0); i < n && d.err == nil; i++ {
			d.array(depth + 1)
		}
	case TypeBool:
		for _, b := range d.take(n) {
			if b > 1 {
				d.fail("bool value %d is neither 0 nor 1", b)
			}
		}
	default:
		d.take(n * uint64(elem.fixedSize()))
	}
}

func readSlice[T any](d *decoder, n uint64, read func(*decoder) T) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = read(d)
		if d.err != nil {
			return nil
		}
	}
	return v
}

func parse(data []byte, skipArrays bool) (*File, error) {
	d := &decoder{b: data, skipArrays: skipArrays}
	if len(data) < 4 || string(data[:4]) != Magic {
		n := min(len(data), 4)
		return nil, fmt.Errorf("not a GGUF file (magic %q, want %q)", data[:n], Magic)
	}
	d.off = 4
	f := &File{data: data, FileSize: uint64(len(data)), Alignment: DefaultAlignment}
	f.Version = d.u32()
	if d.err == nil && f.Version != 2 && f.Version != 3 {
		return nil, fmt.Errorf("unsupported GGUF version %d (llmbench reads versions 2 and 3)", f.Version)
	}
	nTensors := d.u64()
	nKV := d.u64()
	// Each KV takes at least 8 (key length) + 4 (type) + 1 bytes; each tensor info
	// at least 8 + 4 + 4 + 8 bytes.
	if !d.checkCount("metadata key/value", nKV, 13) {
		return nil, d.err
	}
	f.KV = make([]KV, 0, nKV)
	f.kvIndex = make(map[string]int, nKV)
	for i := uint64(0); i < nKV && d.err == nil; i++ {
		key := d.str()
		t := ValueType(d.u32())
		if d.err != nil {
			break
		}
		v := d.value(t, 0)
		if d.err != nil {
			d.err = fmt.Errorf("metadata key %q: %w", key, d.err)
			break
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, fmt.Errorf("duplicate metadata key %q", key)
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	if d.err != nil {
		return nil, d.err
	}
	if v, ok := f.Uint("general.alignment"); ok {
		if v == 0 || v&(v-1) != 0 || v > 1<<20 {
			return nil, fmt.Errorf("general.alignment %d is not a power of two up to 1 MiB", v)
		}
		f.Alignment = v
	}
	if !d.checkCount("tensor", nTensors, 24) {
		return nil, d.err
	}
	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tIndex = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors && d.err == nil; i++ {
		var ti TensorInfo
		ti.Name = d.str()
		nd := d.u32()
		if d.err != nil {
			break
		}
		if nd == 0 || nd > MaxDims {
			return nil, fmt.Errorf("tensor %q: %d dimensions (want 1..%d)", ti.Name, nd, MaxDims)
		}
		ti.Shape = make([]uint64, nd)
		for j := range ti.Shape {
			ti.Shape[j] = d.u64()
		}
		ti.Type = kernels.DType(d.u32())
		ti.Offset = d.u64()
		if d.err != nil {
			break
		}
		size, err := tensorBytes(ti.Type, ti.Shape)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", ti.Name, err)
		}
		ti.Size = size
		if ti.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("tensor %q: offset %d is not aligned to %d", ti.Name, ti.Offset, f.Alignment)
		}
		if _, dup := f.tIndex[ti.Name]; dup {
			return nil, fmt.Errorf("duplicate tensor %q", ti.Name)
		}
		f.tIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}
	if d.err != nil {
		return nil, d.err
	}
	f.DataOffset = alignUp(d.off, f.Alignment)
	if nTensors > 0 && f.DataOffset > f.FileSize {
		return nil, fmt.Errorf("data section starts at %d, past the end of the %d-byte file: %w", f.DataOffset, f.FileSize, ErrTruncated)
	}
	dataSize := f.FileSize - min(f.DataOffset, f.FileSize)
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Offset > dataSize || ti.Size > dataSize-ti.Offset {
			return nil, fmt.Errorf("tensor %q: data [%d, %d) runs past the end of the file (data section is %d bytes): %w",
				ti.Name, ti.Offset, ti.Offset+ti.Size, dataSize, ErrTruncated)
		}
	}
	if err := checkOverlap(f.Tensors); err != nil {
		return nil, err
	}
	if _, err := readSplit(f); err != nil {
		return nil, err
	}
	return f, nil
}

func checkOverlap(ts []TensorInfo) error {
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return ts[idx[a]].Offset < ts[idx[b]].Offset })
	for i := 1; i < len(idx); i++ {
		p, q := &ts[idx[i-1]], &ts[idx[i]]
		if p.Offset+p.Size > q.Offset {
			return fmt.Errorf("tensors %q and %q overlap", p.Name, q.Name)
		}
	}
	return nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the bytes of a tensor (a view into the mapped file, the file of
// its part for a split model).
func (f *File) TensorData(t *TensorInfo) []byte {
	p := f.partOf(t)
	start := p.DataOffset + t.Offset
	return p.data[start : start+t.Size : start+t.Size]
}

// Get returns the value of a metadata key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns a string metadata value.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Get(key)
	s, isStr := v.V.(string)
	return s, ok && isStr
}

// Uint returns an integer metadata value of any width as uint64; negative values are
// reported as absent.
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch x := v.V.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Float returns a float metadata value (float32 or float64) as float64.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	switch x := v.V.(type) {
	case float32:
		return float64(x), ok
	case float64:
		return x, ok
	}
	return 0, false
}

// Bool returns a bool metadata value.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Get(key)
	b, isBool := v.V.(bool)
	return b, ok && isBool
}

// Array returns an array metadata value.
func (f *File) Array(key string) (Array, bool) {
	v, ok := f.Get(key)
	a, isArr := v.V.(Array)
	return a, ok && isArr
}

// Strings returns a string-array metadata value.
func (f *File) Strings(key string) ([]string, bool) {
	a, ok := f.Array(key)
	s, isStr := a.Values.([]string)
	return s, ok && isStr
}

// Float32s returns a float32-array metadata value.
func (f *File) Float32s(key string) ([]float32, bool) {
	a, ok := f.Array(key)
	s, is := a.Values.([]float32)
	return s, ok && is
}

// Int32s returns an int32-array metadata value (uint32 arrays are converted).
func (f *File) Int32s(key string) ([]int32, bool) {
	a, ok := f.Array(key)
	if !ok {
		return nil, false
	}
	switch s := a.Values.(type) {
	case []int32:
		return s, true
	case []uint32:
		out := make([]int32, len(s))
		for i, x := range s {
			out[i] = int32(x)
		}
		return out, true
	}
	return nil, false
}

// Architecture returns general.architecture ("llama", "qwen2", …).
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}

// FormatValue renders a value briefly for display: arrays show their type, length and
// first few elements.
func FormatValue(v Value) string {
	a, ok := v.V.(Array)
	if !ok {
		if s, isStr := v.V.(string); isStr {
			if len(s) > 60 {
				s = s[:57] + "..."
			}
			return fmt.Sprintf("%q", s)
		}
		return fmt.Sprint(v.V)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s × %d]", a.Elem, a.Len())
	return b.String()
}
