package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/kernels"
)

const splitSource = "../../testdata/models/tinystories-656k-q8_0.gguf"

// sameModel checks that g holds f's tensors, byte for byte, and f's metadata.
func sameModel(t *testing.T, f, g *File) {
	t.Helper()
	if len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("%d tensors, want %d", len(g.Tensors), len(f.Tensors))
	}
	for i := range f.Tensors {
		want := &f.Tensors[i]
		got, ok := g.Tensor(want.Name)
		if !ok {
			t.Fatalf("tensor %q missing", want.Name)
		}
		if got.Type != want.Type || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(g.TensorData(got), f.TensorData(want)) {
			t.Fatalf("tensor %q differs", want.Name)
		}
	}
	for _, kv := range f.KV {
		v, ok := g.Get(kv.Key)
		if !ok || FormatValue(v) != FormatValue(kv.Value) {
			t.Fatalf("key %q = %v, want %v", kv.Key, FormatValue(v), FormatValue(kv.Value))
		}
	}
}

// TestSplitRoundTrip writes a real model in 3 parts as gguf-split names and fills
// them, and reads it back from its first part by every means: mapped, header only,
// read into memory, and from the parts' bytes.
func TestSplitRoundTrip(t *testing.T) {
	src, err := Open(splitSource)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	prefix := filepath.Join(t.TempDir(), "tiny")
	paths, err := WriteSplit(src, prefix, 3)
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	var raw [][]byte
	for k, p := range paths {
		if want := fmt.Sprintf("tiny-%05d-of-00003.gguf", k+1); filepath.Base(p) != want {
			t.Errorf("part %d is %s, want %s", k, filepath.Base(p), want)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
		total += uint64(len(b))
		part, err := parse(b, false)
		if err != nil {
			t.Fatal(err)
		}
		no, _ := part.Uint(KeySplitNo)
		n, _ := part.Uint(KeySplitCount)
		all, _ := part.Uint(KeySplitTensors)
		if no != uint64(k) || n != 3 || all != uint64(len(src.Tensors)) || len(part.Tensors) == 0 {
			t.Errorf("part %d: split.no %d, split.count %d, split.tensors.count %d, %d tensors", k, no, n, all, len(part.Tensors))
		}
		if _, ok := part.Get("general.architecture"); ok != (k == 0) {
			t.Errorf("part %d: model metadata present = %v; gguf-split keeps it in the first part only", k, ok)
		}
	}
	for name, open := range map[string]func(string) (*File, error){"Open": Open, "OpenHeader": OpenHeader, "ReadFile": ReadFile} {
		f, err := open(paths[0])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name != "OpenHeader" {
			sameModel(t, src, f)
		}
		if f.SplitCount() != 3 || f.TotalSize() != total || len(f.Tensors) != len(src.Tensors) {
			t.Errorf("%s: %d parts, %d bytes, %d tensors; want 3, %d, %d", name, f.SplitCount(), f.TotalSize(), len(f.Tensors), total, len(src.Tensors))
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
	// Release takes the bytes of a tensor of any part, nothing outside them.
	m, err := Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	last := &m.Tensors[len(m.Tensors)-1]
	if last.part != 2 {
		t.Fatalf("last tensor in part %d", last.part+1)
	}
	if err := m.Release(m.TensorData(last)); err != nil {
		t.Errorf("Release of a tensor of part 3: %v", err)
	}
	if err := m.Release(make([]byte, 8)); err == nil {
		t.Error("Release of bytes outside every part succeeded")
	}
	m.Close()
	f, err := ParseParts(raw...)
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, src, f)
	if _, err := Parse(raw[0]); err == nil || !strings.Contains(err.Error(), "split model in 3 parts") {
		t.Errorf("Parse of a first part: %v", err)
	}
	// A model in one part is a plain file with the split keys.
	one, err := WriteSplit(src, filepath.Join(t.TempDir(), "one"), 1)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(one[0])
	if err != nil || g.SplitCount() != 1 {
		t.Fatalf("one part: %v", err)
	}
	sameModel(t, src, g)
	g.Close()
	if _, err := WriteSplit(src, prefix, len(src.Tensors)+1); err == nil {
		t.Error("split in more parts than tensors")
	}
}

// TestSplitOpenErrors checks the one-line errors of a split model on disk: a
// missing part, a later part opened alone, a first part renamed, a part replaced.
func TestSplitOpenErrors(t *testing.T) {
	src, err := Open(splitSource)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dir := t.TempDir()
	paths, err := WriteSplit(src, filepath.Join(dir, "model"), 3)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, path, want string) {
		t.Helper()
		_, err := Open(path)
		if err == nil || err.Error() != want {
			t.Errorf("%s: err = %v\nwant %s", name, err, want)
		}
		if _, herr := OpenHeader(path); herr == nil || herr.Error() != want {
			t.Errorf("%s: OpenHeader err = %v", name, herr)
		}
	}
	check("later part", paths[1], "gguf: "+paths[1]+": part 2 of a split model in 3 parts: load its first part")
	renamed := filepath.Join(dir, "renamed.gguf")
	if err := os.Link(paths[0], renamed); err != nil {
		t.Fatal(err)
	}
	check("renamed", renamed, "gguf: "+renamed+": first part of a split model in 3 parts, but its name does not end in -00001-of-00003.gguf, so the other parts cannot be found")
	// Part 3 in place of part 2.
	b3, _ := os.ReadFile(paths[2])
	b2, _ := os.ReadFile(paths[1])
	if err := os.WriteFile(paths[1], b3, 0o644); err != nil {
		t.Fatal(err)
	}
	check("wrong part", paths[0], "gguf: "+paths[1]+": says it is part 3 of 3, want part 2 of 3")
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	check("missing", paths[0], "gguf: "+paths[1]+": missing (part 2 of 3)")
	var se *SplitError
	if _, err := Open(paths[0]); !errors.Is(err, ErrPartMissing) || !errors.As(err, &se) {
		t.Errorf("missing part: %v is not ErrPartMissing, a SplitError", err)
	}
	var fe *FileError
	if _, err := ReadFile(paths[0]); !errors.As(err, &fe) || fe.Path != paths[1] {
		t.Errorf("ReadFile of a model missing a part: %v", err)
	}
	// A truncated part: its tensors run past its end.
	if err := os.WriteFile(paths[1], b2[:len(b2)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(paths[0]); err == nil || !strings.HasPrefix(err.Error(), "gguf: "+paths[1]+": tensor ") || !errors.Is(err, ErrTruncated) || errors.As(err, &se) {
		t.Errorf("truncated part: %v; want a header error of part 2", err)
	}
}

// splitPart builds one part in memory: split keys no/count/total (a negative value
// leaves the key out) and 8-float tensors of the given names.
func splitPart(t testing.TB, no, count, total int, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if no == 0 {
		w.AddKV("general.architecture", "llama")
	}
	if no >= 0 {
		w.AddKV(KeySplitNo, uint16(no))
	}
	if count >= 0 {
		w.AddKV(KeySplitCount, uint16(count))
	}
	if total >= 0 {
		w.AddKV(KeySplitTensors, int32(total))
	}
	for _, n := range names {
		w.AddTensor(n, kernels.F32, 8)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		tw, _ := w.BeginTensor(n)
		tw.Write(bytes.Repeat([]byte{byte(i + 1)}, 32))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSplitHostile feeds split metadata that lies: each is refused in one line that
// names the part, never a panic or a model with a tensor from nowhere.
func TestSplitHostile(t *testing.T) {
	good := [][]byte{splitPart(t, 0, 3, 4, "a"), splitPart(t, 1, 3, 4, "b", "c"), splitPart(t, 2, 3, 4, "d")}
	f, err := ParseParts(good...)
	if err != nil {
		t.Fatal(err)
	}
	for n, fill := range map[string]byte{"a": 1, "b": 1, "c": 2, "d": 1} {
		ti, ok := f.Tensor(n)
		if !ok || !bytes.Equal(f.TensorData(ti), bytes.Repeat([]byte{fill}, 32)) {
			t.Errorf("tensor %s: found %v, or its bytes differ", n, ok)
		}
	}
	short := good[1][:len(good[1])-1]
	cases := []struct {
		name  string
		parts [][]byte
		want  string
	}{
		{"count 0", [][]byte{splitPart(t, 0, 0, 1, "a")}, "part 1: split.count is 0 (want 1 to 65535)"},
		{"no past count", [][]byte{splitPart(t, 3, 3, 1, "a")}, "part 1: split.no is 3 but the model has 3 parts"},
		{"no without count", [][]byte{splitPart(t, 0, -1, 1, "a")}, "part 1: split.no without split.count"},
		{"count without no", [][]byte{splitPart(t, -1, 3, 4, "a")}, "part 1: split model in 3 parts without a valid split.no"},
		{"later part first", [][]byte{good[1], good[0], good[2]}, "part 1: part 2 of a split model in 3 parts: load its first part"},
		{"duplicate tensor", [][]byte{good[0], good[1], splitPart(t, 2, 3, 4, "b")}, `part 3: tensor "b" is also in part 2`},
		{"duplicate in first", [][]byte{good[0], splitPart(t, 1, 3, 4, "a", "c"), good[2]}, `part 2: tensor "a" is also in part 1`},
		{"data past a part's end", [][]byte{good[0], short, good[2]}, `part 2: tensor "c": data [32, 64) runs past the end`},
		{"wrong no", [][]byte{good[0], good[2], good[1]}, "part 2: says it is part 3 of 3, want part 2 of 3"},
		{"wrong count", [][]byte{good[0], splitPart(t, 1, 2, 4, "b", "c"), good[2]}, "part 2: says it is part 2 of 2, want part 2 of 3"},
		{"missing", good[:2], "part 3: missing"},
		{"extra", append(good[:3:3], good[2]), "part 1: 4 parts given, the model has 3"},
		{"too few tensors", [][]byte{splitPart(t, 0, 3, 5, "a"), splitPart(t, 1, 3, 5, "b", "c"), splitPart(t, 2, 3, 5, "d")}, "part 1: split.tensors.count is 5 but its 3 parts hold 4 tensors"},
		{"count below a part's", [][]byte{splitPart(t, 0, 3, 4, "a"), splitPart(t, 1, 3, 1, "b", "c"), good[2]}, "part 2: split.tensors.count is 1 but this part alone holds 2 tensors"},
		{"counts disagree", [][]byte{good[0], splitPart(t, 1, 3, 3, "b", "c"), good[2]}, "part 2: split.tensors.count is 3, the first part says 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseParts(c.parts...)
			if err == nil || !strings.HasPrefix(err.Error(), "gguf: "+c.want) {
				t.Fatalf("err = %v\nwant it to start with %q", err, "gguf: "+c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// FuzzParseParts feeds three arbitrary parts to the split reader: it must return an
// error or a model whose tensors have unique names, lie inside their own part and
// number split.tensors.count, and never panic.
func FuzzParseParts(f *testing.F) {
	f.Add(splitPart(f, 0, 3, 4, "a"), splitPart(f, 1, 3, 4, "b", "c"), splitPart(f, 2, 3, 4, "d"))
	f.Add(splitPart(f, 0, 2, 2, "a"), splitPart(f, 1, 2, 2, "a"), []byte{})
	f.Add(sample(f), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		parts := [][]byte{a, b, c}
		for len(parts) > 1 && len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1]
		}
		g, err := ParseParts(parts...)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if g.SplitCount() != len(parts) {
			t.Fatalf("%d parts given, model has %d", len(parts), g.SplitCount())
		}
		seen := map[string]bool{}
		for i := range g.Tensors {
			ti := &g.Tensors[i]
			if seen[ti.Name] {
				t.Fatalf("tensor %q twice", ti.Name)
			}
			seen[ti.Name] = true
			p := g.partOf(ti)
			if p.DataOffset+ti.Offset+ti.Size > uint64(len(parts[ti.part])) {
				t.Fatalf("tensor %q past the end of part %d", ti.Name, ti.part+1)
			}
			_ = g.TensorData(ti)
		}
		if n, ok := g.Uint(KeySplitTensors); ok && n != uint64(len(g.Tensors)) && g.SplitCount() > 1 {
			t.Fatalf("split.tensors.count %d, %d tensors", n, len(g.Tensors))
		}
	})
}
