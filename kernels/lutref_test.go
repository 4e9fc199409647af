package kernels

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// lutSliceDir holds the committed slices of llama.cpp's IQ4_NL, IQ4_XS and MXFP4
// reference files (testdata/llamacpp/README.md says where they come from), so that
// the llama.cpp checks run from a clone alone.
const lutSliceDir = "testdata/llamacpp"

// updateLUT rewrites the committed slices from the full reference files:
// go test ./kernels -run TestLUTSlices -update-lut
var updateLUT = flag.Bool("update-lut", false, "rewrite testdata/llamacpp from "+quantRefDir)

// lutSliceFiles are the reference files sliced: the F32 source and one file per type.
var lutSliceFiles = []string{"tiny-llama-F32.gguf", "tiny-llama-IQ4_NL.gguf", "tiny-llama-IQ4_XS.gguf", "tiny-llama-MXFP4-ffn.gguf"}

// lutSlice is one piece of a reference tensor kept in the slices: its first rows of
// cols elements (whole rows, so every block and IQ4_XS super-block is whole).
type lutSlice struct {
	name       string
	rows, cols int
}

// lutSlices are the tensors kept: two 256-column FFN matrices, which each file stores
// in its type (the MXFP4 file stores only ffn_up and ffn_gate in MXFP4).
var lutSlices = []lutSlice{{"blk.0.ffn_up.weight", 8, 256}, {"blk.1.ffn_gate.weight", 8, 256}}

// sliceOf returns the slices' part of one full file: the first rows of each kept
// tensor, under the tensor's name.
func sliceOf(t *testing.T, full map[string]ggufTensor) []ggufTensor {
	var out []ggufTensor
	for _, s := range lutSlices {
		ft, ok := full[s.name]
		if !ok {
			t.Fatalf("no tensor %s", s.name)
		}
		size, err := ft.typ.RowBytes(s.rows * s.cols)
		if err != nil || size > len(ft.data) {
			t.Fatalf("%s: %d rows of %d do not fit (%v)", s.name, s.rows, s.cols, err)
		}
		out = append(out, ggufTensor{name: s.name, typ: ft.typ, n: s.rows * s.cols, data: ft.data[:size]})
	}
	return out
}

// writeGGUF writes tensors as a GGUF v3 file with no metadata, each tensor as a
// cols × (n/cols) matrix, data aligned to 32 bytes (what readGGUF reads).
func writeGGUF(path string, ts []ggufTensor, cols int) error {
	var b bytes.Buffer
	le := binary.LittleEndian
	put := func(v any) { _ = binary.Write(&b, le, v) }
	b.WriteString("GGUF")
	put(uint32(3))
	put(uint64(len(ts)))
	put(uint64(0))
	off := uint64(0)
	for _, t := range ts {
		put(uint64(len(t.name)))
		b.WriteString(t.name)
		put(uint32(2))
		put(uint64(cols))
		put(uint64(t.n / cols))
		put(uint32(t.typ))
		put(off)
		off += (uint64(len(t.data)) + 31) &^ 31
	}
	pad := func() { b.Write(make([]byte, (32-b.Len()%32)%32)) }
	pad()
	for _, t := range ts {
		b.Write(t.data)
		pad()
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// TestLUTSlices checks that each committed slice holds exactly the kept rows of the
// full reference file it was cut from (where the full files are present; with
// -update-lut it rewrites the slices first).
func TestLUTSlices(t *testing.T) {
	for _, f := range lutSliceFiles {
		full, err := readGGUF(filepath.Join(quantRefDir, f))
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("llama.cpp reference files absent (%s): slices not compared", quantRefDir)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := sliceOf(t, full)
		if *updateLUT {
			if err := writeGGUF(filepath.Join(lutSliceDir, f), want, lutSlices[0].cols); err != nil {
				t.Fatal(err)
			}
		}
		got, err := readGGUF(filepath.Join(lutSliceDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d tensors in the slice, want %d", f, len(got), len(want))
		}
		for _, w := range want {
			g := got[w.name]
			if g.typ != w.typ || g.n != w.n || !bytes.Equal(g.data, w.data) {
				t.Fatalf("%s: slice of %s differs from the full file's first %d elements", f, w.name, w.n)
			}
		}
	}
}
