package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"llmbench/kernels"
)

func TestFileTypeName(t *testing.T) {
	for id, want := range map[uint32]string{
		0: "all F32", 1: "F16", 2: "Q4_0", 7: "Q8_0", 10: "Q2_K - Medium", 13: "Q3_K - Large",
		14: "Q4_K - Small", 15: "Q4_K - Medium", 17: "Q5_K - Medium", 18: "Q6_K", 21: "Q2_K - Small",
		30: "IQ4_XS - 4.25 bpw", 32: "BF16", 4: "unknown (4)", 999: "unknown (999)",
		15 | FileTypeGuessed: "Q4_K - Medium (guessed)",
	} {
		if got := FileTypeName(id); got != want {
			t.Errorf("FileTypeName(%d) = %q; want %q", id, got, want)
		}
	}
}

// tiny returns a parsed file with the given metadata and one tensor per type
// (matrices of 32×2 unless a vector is asked for with shape).
func tiny(t *testing.T, kv map[string]any, tensors map[string]kernels.DType, shape ...uint64) *File {
	t.Helper()
	if len(shape) == 0 {
		shape = []uint64{32, 2}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for k, v := range kv {
		w.AddKV(k, v)
	}
	var names []string
	for name, typ := range tensors {
		w.AddTensor(name, typ, shape...)
		names = append(names, name)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i := range w.tensors {
		tw, err := w.BeginTensor(w.tensors[i].Name)
		if err != nil {
			t.Fatal(err)
		}
		tw.Write(make([]byte, w.tensors[i].Size))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFileType(t *testing.T) {
	cases := []struct {
		name    string
		kv      map[string]any
		tensors map[string]kernels.DType
		shape   []uint64
		want    string
	}{
		{"from general.file_type", map[string]any{"general.file_type": uint32(15)}, map[string]kernels.DType{"a": kernels.F32}, nil, "Q4_K - Medium"},
		{"guessed from the matrices", nil, map[string]kernels.DType{"a": kernels.Q8_0, "b": kernels.Q8_0, "c": kernels.F16}, nil, "Q8_0 (guessed)"},
		{"all F32 guessed", nil, map[string]kernels.DType{"a": kernels.F32}, nil, "all F32 (guessed)"},
		{"vectors only: nothing to guess from", nil, map[string]kernels.DType{"a": kernels.F32}, []uint64{32}, ""},
		{"negative file_type ignored", map[string]any{"general.file_type": int32(-1)}, map[string]kernels.DType{"a": kernels.Q4_0}, nil, "Q4_0 (guessed)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := tiny(t, c.kv, c.tensors, c.shape...).FileType(); got != c.want {
				t.Errorf("FileType() = %q; want %q", got, c.want)
			}
		})
	}
}

// TestOpenHeader: a file opened for listing has the same scalars, tensors and data
// offset as one opened in full, its arrays without elements.
func TestOpenHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.gguf")
	if err := os.WriteFile(path, sample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	head, err := OpenHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Close()
	if len(head.KV) != len(full.KV) || !reflect.DeepEqual(head.Tensors, full.Tensors) || head.DataOffset != full.DataOffset {
		t.Fatalf("header %d keys %+v @%d; full %d keys %+v @%d", len(head.KV), head.Tensors, head.DataOffset, len(full.KV), full.Tensors, full.DataOffset)
	}
	for i, kv := range full.KV {
		h := head.KV[i]
		if a, ok := kv.Value.V.(Array); ok {
			if ha, _ := h.Value.V.(Array); h.Key != kv.Key || ha.Elem != a.Elem || ha.Len() != 0 {
				t.Errorf("%s: %+v; want an empty %s array", kv.Key, h, a.Elem)
			}
			continue
		}
		if !reflect.DeepEqual(h, kv) {
			t.Errorf("%s: %+v; want %+v", kv.Key, h, kv)
		}
	}
	// A truncated string array inside is caught as when parsing it.
	data := sample(t)
	for cut := 24; cut < len(data); cut += 7 {
		_, e1 := parse(data[:cut], false)
		_, e2 := parse(data[:cut], true)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("cut at %d: full %v, header %v", cut, e1, e2)
		}
	}
}
