package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"llmbench/kernels"
)

// sample writes a small file with every value type, a nested array and two tensors.
func sample(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.AddKV("general.architecture", "llama")
	w.AddKV("u8", uint8(7))
	w.AddKV("i8", int8(-7))
	w.AddKV("u16", uint16(700))
	w.AddKV("i16", int16(-700))
	w.AddKV("u32", uint32(70000))
	w.AddKV("i32", int32(-70000))
	w.AddKV("f32", float32(1.5))
	w.AddKV("bool", true)
	w.AddKV("u64", uint64(1<<40))
	w.AddKV("i64", int64(-1<<40))
	w.AddKV("f64", 2.25)
	w.AddKV("strs", []string{"a", "", "ccc"})
	w.AddKV("f32s", []float32{1, 2, 3})
	w.AddKV("i32s", []int32{-1, 0, 1})
	w.AddKV("nested", []Array{{Elem: TypeUint8, Values: []uint8{1, 2}}, {Elem: TypeString, Values: []string{"x"}}})
	w.AddTensor("a", kernels.F32, 4, 2)
	w.AddTensor("b", kernels.F16, 3)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	tw, _ := w.BeginTensor("a")
	for i := range 8 {
		binary.Write(tw, binary.LittleEndian, float32(i))
	}
	tw, _ = w.BeginTensor("b")
	tw.Write([]byte{1, 2, 3, 4, 5, 6})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if uint64(buf.Len()) != w.Size() {
		t.Fatalf("Size() = %d, wrote %d", w.Size(), buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	f, err := Parse(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"u8": uint8(7), "i8": int8(-7), "u16": uint16(700), "i16": int16(-700), "u32": uint32(70000),
		"i32": int32(-70000), "f32": float32(1.5), "bool": true, "u64": uint64(1 << 40), "i64": int64(-1 << 40), "f64": 2.25,
		"general.architecture": "llama",
	}
	for k, v := range want {
		got, ok := f.Get(k)
		if !ok || !reflect.DeepEqual(got.V, v) {
			t.Errorf("%s = %#v, want %#v", k, got.V, v)
		}
	}
	if s, _ := f.Strings("strs"); !reflect.DeepEqual(s, []string{"a", "", "ccc"}) {
		t.Errorf("strs = %q", s)
	}
	if s, _ := f.Float32s("f32s"); !reflect.DeepEqual(s, []float32{1, 2, 3}) {
		t.Errorf("f32s = %v", s)
	}
	if s, _ := f.Int32s("i32s"); !reflect.DeepEqual(s, []int32{-1, 0, 1}) {
		t.Errorf("i32s = %v", s)
	}
	if a, _ := f.Array("nested"); a.Len() != 2 || !reflect.DeepEqual(a.Values.([]Array)[1].Values, []string{"x"}) {
		t.Errorf("nested = %#v", a)
	}
	if u, ok := f.Uint("i32"); ok {
		t.Errorf("Uint of a negative value = %d, want absent", u)
	}
	if u, ok := f.Uint("u16"); !ok || u != 700 {
		t.Errorf("Uint(u16) = %d %v", u, ok)
	}
	a, ok := f.Tensor("a")
	if !ok || a.Type != kernels.F32 || !reflect.DeepEqual(a.Shape, []uint64{4, 2}) || a.Size != 32 || a.Rows() != 2 {
		t.Fatalf("tensor a = %+v", a)
	}
	if d := f.TensorData(a); binary.LittleEndian.Uint32(d[28:]) != 0x40e00000 { // 7.0
		t.Errorf("tensor a data = %v", d)
	}
	b, _ := f.Tensor("b")
	if b.Offset != 32 || !bytes.Equal(f.TensorData(b), []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("tensor b = %+v", b)
	}
}

func TestWriterMisuse(t *testing.T) {
	cases := []struct {
		name string
		run  func(w *Writer) error
		want string
	}{
		{"int", func(w *Writer) error { w.AddKV("k", 1); return w.WriteHeader() }, "plain int"},
		{"short tensor", func(w *Writer) error {
			w.AddTensor("a", kernels.F32, 4)
			w.WriteHeader()
			tw, _ := w.BeginTensor("a")
			tw.Write(make([]byte, 8))
			return w.Close()
		}, "8 of its 16 bytes"},
		{"long tensor", func(w *Writer) error {
			w.AddTensor("a", kernels.F32, 1)
			w.WriteHeader()
			tw, _ := w.BeginTensor("a")
			_, err := tw.Write(make([]byte, 8))
			return err
		}, "more than its 4 bytes"},
		{"order", func(w *Writer) error {
			w.AddTensor("a", kernels.F32, 1)
			w.AddTensor("b", kernels.F32, 1)
			w.WriteHeader()
			_, err := w.BeginTensor("b")
			return err
		}, "out of order"},
		{"missing", func(w *Writer) error { w.AddTensor("a", kernels.F32, 1); return w.Close() }, "0 of 1 tensors"},
		{"block", func(w *Writer) error { w.AddTensor("a", kernels.Q4_0, 33); return w.WriteHeader() }, "block size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(NewWriter(&bytes.Buffer{}))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// header builds the start of a file: magic, version, tensor and KV counts.
func header(version uint32, nTensors, nKV uint64) []byte {
	b := []byte("GGUF")
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, nTensors)
	return binary.LittleEndian.AppendUint64(b, nKV)
}

func kvString(key, val string) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.LittleEndian.AppendUint32(b, uint32(TypeString))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(val)))
	return append(b, val...)
}

func TestHostile(t *testing.T) {
	good := sample(t)
	arr := func(elem ValueType, n uint64) []byte {
		b := header(3, 0, 1)
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = append(b, 'k')
		b = binary.LittleEndian.AppendUint32(b, uint32(TypeArray))
		b = binary.LittleEndian.AppendUint32(b, uint32(elem))
		return binary.LittleEndian.AppendUint64(b, n)
	}
	tensor := func(nd uint32, dims []uint64, typ uint32, off uint64) []byte {
		b := header(3, 1, 0)
		b = binary.LittleEndian.AppendUint64(b, 1)
		b = append(b, 't')
		b = binary.LittleEndian.AppendUint32(b, nd)
		for _, d := range dims {
			b = binary.LittleEndian.AppendUint64(b, d)
		}
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = binary.LittleEndian.AppendUint64(b, off)
		return append(b, make([]byte, 64)...)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a GGUF file"},
		{"magic", append([]byte("GGML"), good[4:]...), "not a GGUF file"},
		{"version 1", header(1, 0, 0), "unsupported GGUF version 1"},
		{"version 99", header(99, 0, 0), "unsupported GGUF version 99"},
		{"absurd tensor count", header(3, 1<<62, 0), "tensor count"},
		{"absurd kv count", header(3, 0, 1<<62), "key/value count"},
		{"truncated header", header(3, 0, 0)[:10], "truncated"},
		{"truncated kv", append(header(3, 0, 1), kvString("key", "value")[:14]...), "truncated"},
		{"huge string", append(append(header(3, 0, 1), binary.LittleEndian.AppendUint64(nil, 1<<60)...), make([]byte, 16)...), "string of"},
		{"huge array", arr(TypeUint32, 1<<61), "array element count"},
		{"huge string array", arr(TypeString, 1<<40), "array element count"},
		{"array of unknown", arr(ValueType(77), 1), "unknown value type"},
		{"unknown value", append(append(header(3, 0, 1), binary.LittleEndian.AppendUint64(nil, 1)...), 'k', 99, 0, 0, 0), "unknown value type"},
		{"zero dims", tensor(0, nil, 0, 0), "0 dimensions"},
		{"five dims", tensor(5, []uint64{1, 1, 1, 1, 1}, 0, 0), "5 dimensions"},
		{"unknown tensor type", tensor(1, []uint64{4}, 1234, 0), "unknown tensor type 1234"},
		{"overflow", tensor(2, []uint64{1 << 40, 1 << 40}, 0, 0), "overflows"},
		{"past end", tensor(1, []uint64{1 << 20}, 0, 0), "past the end"},
		{"misaligned", tensor(1, []uint64{1}, 0, 3), "not aligned"},
		{"bad block", tensor(1, []uint64{31}, uint32(kernels.Q4_0), 0), "block size"},
		{"truncated data", good[:len(good)-1], "past the end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if _, err := Parse(good[:len(good)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated data: err = %v, want ErrTruncated", err)
	}
}

func TestOpenRealModels(t *testing.T) {
	cases := []struct {
		path    string
		arch    string
		tensors int
		vocab   int
	}{
		{"../builtin/stories260K.gguf", "llama", 48, 512},
		{"../../testdata/models/tinystories-656k-q8_0.gguf", "llama", 20, 2048},
		{"../../testdata/models/TinyStories-656K.f16.gguf", "llama", 20, 2048},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			f, err := Open(c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Architecture() != c.arch || len(f.Tensors) != c.tensors {
				t.Errorf("arch %q tensors %d", f.Architecture(), len(f.Tensors))
			}
			if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != c.vocab {
				t.Errorf("vocab %d, want %d", len(toks), c.vocab)
			}
			last := f.Tensors[len(f.Tensors)-1]
			if end := f.DataOffset + last.Offset + last.Size; end > f.FileSize {
				t.Errorf("data ends at %d of %d", end, f.FileSize)
			}
		})
	}
	if _, err := Open("no/such/file.gguf"); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

// TestRewrite reads a real model and writes it back through the Writer: the bytes
// must be identical, which checks the writer against llama.cpp's layout.
func TestRewrite(t *testing.T) {
	path := "../../testdata/models/tinystories-656k-q8_0.gguf"
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(orig)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, kv := range f.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	for _, ti := range f.Tensors {
		w.AddTensor(ti.Name, ti.Type, ti.Shape...)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i := range f.Tensors {
		tw, err := w.BeginTensor(f.Tensors[i].Name)
		if err != nil {
			t.Fatal(err)
		}
		tw.Write(f.TensorData(&f.Tensors[i]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), orig) {
		t.Fatalf("rewritten file differs (%d vs %d bytes)", buf.Len(), len(orig))
	}
}

// FuzzParse feeds arbitrary bytes to the parser: it must return an error or a File
// whose every tensor lies inside the input, and never panic.
func FuzzParse(f *testing.F) {
	f.Add(sample(f))
	f.Add(header(3, 0, 0))
	f.Add(append(header(2, 0, 1), kvString("general.alignment", "x")...))
	f.Add(splitPart(f, 0, 3, 4, "a", "b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := parse(data, false)
		h, herr := parse(data, true)
		if _, perr := Parse(data); perr != nil && err == nil {
			if n, _ := g.Uint(KeySplitCount); n <= 1 {
				t.Fatalf("Parse refused what parse read: %v", perr)
			}
		}
		if (err == nil) != (herr == nil) || err == nil && (len(h.KV) != len(g.KV) || len(h.Tensors) != len(g.Tensors) || h.DataOffset != g.DataOffset) {
			t.Fatalf("skipping arrays: %v, %v; parsing them: %v", h, herr, err)
		}
		if err != nil {
			return
		}
		for i := range g.Tensors {
			ti := &g.Tensors[i]
			if g.DataOffset+ti.Offset+ti.Size > uint64(len(data)) {
				t.Fatalf("tensor %q past the end", ti.Name)
			}
			_ = g.TensorData(ti)
		}
	})
}
