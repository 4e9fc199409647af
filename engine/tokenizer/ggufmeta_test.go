package tokenizer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// testMeta is a map-backed Metadata for tests. readGGUFMeta fills one from
// a GGUF file's key/value section (a minimal reader, so this package's tests
// do not depend on engine/gguf).
type testMeta map[string]any

func (m testMeta) String(k string) (string, bool)   { v, ok := m[k].(string); return v, ok }
func (m testMeta) Strings(k string) ([]string, bool) { v, ok := m[k].([]string); return v, ok }
func (m testMeta) Float32s(k string) ([]float32, bool) {
	v, ok := m[k].([]float32)
	return v, ok
}
func (m testMeta) Int32s(k string) ([]int32, bool) { v, ok := m[k].([]int32); return v, ok }
func (m testMeta) Bool(k string) (bool, bool)      { v, ok := m[k].(bool); return v, ok }
func (m testMeta) Uint(k string) (uint64, bool) {
	switch v := m[k].(type) {
	case uint64:
		return v, true
	case uint32:
		return uint64(v), true
	case int32:
		return uint64(v), true
	case int64:
		return uint64(v), true
	case int:
		return uint64(v), true
	}
	return 0, false
}

type ggufReader struct {
	b   []byte
	off int
	err error
}

func (r *ggufReader) take(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		r.err = errors.New("gguf: truncated")
		return make([]byte, max(n, 0))
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}
func (r *ggufReader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *ggufReader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *ggufReader) str() string { return string(r.take(int(r.u64()))) }

func (r *ggufReader) scalar(typ uint32) any {
	switch typ {
	case 0:
		return uint64(r.take(1)[0])
	case 1:
		return int64(int8(r.take(1)[0]))
	case 2:
		return uint64(binary.LittleEndian.Uint16(r.take(2)))
	case 3:
		return int64(int16(binary.LittleEndian.Uint16(r.take(2))))
	case 4:
		return uint64(r.u32())
	case 5:
		return int32(r.u32())
	case 6:
		return math.Float32frombits(r.u32())
	case 7:
		return r.take(1)[0] != 0
	case 8:
		return r.str()
	case 10:
		return r.u64()
	case 11:
		return int64(r.u64())
	case 12:
		return math.Float64frombits(r.u64())
	}
	r.err = fmt.Errorf("gguf: unknown type %d", typ)
	return nil
}

func readGGUFMeta(path string) (testMeta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &ggufReader{b: b}
	if string(r.take(4)) != "GGUF" {
		return nil, errors.New("gguf: bad magic")
	}
	r.u32()
	r.u64()
	nkv := r.u64()
	m := testMeta{}
	for i := uint64(0); i < nkv && r.err == nil; i++ {
		k := r.str()
		typ := r.u32()
		if typ != 9 {
			m[k] = r.scalar(typ)
			continue
		}
		et := r.u32()
		n := int(r.u64())
		switch et {
		case 8:
			v := make([]string, n)
			for j := range v {
				v[j] = r.str()
			}
			m[k] = v
		case 6:
			v := make([]float32, n)
			for j := range v {
				v[j] = math.Float32frombits(r.u32())
			}
			m[k] = v
		case 5:
			v := make([]int32, n)
			for j := range v {
				v[j] = int32(r.u32())
			}
			m[k] = v
		default:
			for j := 0; j < n; j++ {
				r.scalar(et)
			}
		}
	}
	return m, r.err
}
