package gguf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The metadata keys of a split model, as llama.cpp's gguf-split writes them
// (LLM_KV_SPLIT_*): every part has them; the first part also has all the model's
// other metadata, the others only these three.
const (
	// KeySplitNo is the part's index, from 0 (u16).
	KeySplitNo = "split.no"
	// KeySplitCount is the number of parts (u16).
	KeySplitCount = "split.count"
	// KeySplitTensors is the number of tensors in all the parts together (i32).
	KeySplitTensors = "split.tensors.count"
)

// maxSplitCount bounds split.count, a u16 (whose values fit the five digits of the
// part numbers in a file name).
const maxSplitCount = 1<<16 - 1

// SplitPath returns the file of part no (from 0) of a model in count parts whose
// files start with prefix, as llama.cpp names it: PREFIX-0000k-of-0000n.gguf, k = no+1.
func SplitPath(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no+1, count)
}

// FileError is the error of one file of a model (one part of a split model): it
// cannot be read, is not GGUF, is missing, or is not the part its place in the model
// says. Open's errors are FileErrors; the message starts with the file.
type FileError struct {
	Path string // the file
	Err  error
}

// Error returns "gguf: PATH: what is wrong".
func (e *FileError) Error() string { return "gguf: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns what is wrong.
func (e *FileError) Unwrap() error { return e.Err }

// SplitError is an error in how a split model's parts fit together (a part missing,
// in the wrong place, a tensor in two parts), as against an error in one file's
// header. Its message is its Err's.
type SplitError struct{ Err error }

// Error returns Err's message.
func (e *SplitError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SplitError) Unwrap() error { return e.Err }

// splitError formats a SplitError.
func splitError(format string, a ...any) error { return &SplitError{fmt.Errorf(format, a...)} }

// ErrPartMissing reports that a part of a split model is not where its name says.
var ErrPartMissing = errors.New("missing")

// splitMeta is a file's split metadata; count is 1 for a file that is not split.
type splitMeta struct {
	no, count, tensors uint64
	hasTensors         bool
}

// readSplit reads and checks f's split metadata.
func readSplit(f *File) (splitMeta, error) {
	m := splitMeta{count: 1}
	if _, ok := f.Get(KeySplitCount); !ok {
		if _, ok := f.Get(KeySplitNo); ok {
			return m, fmt.Errorf("%s without %s", KeySplitNo, KeySplitCount)
		}
		return m, nil
	}
	var ok bool
	if m.count, ok = f.Uint(KeySplitCount); !ok {
		return m, fmt.Errorf("%s is not a non-negative integer", KeySplitCount)
	}
	if m.count == 0 || m.count > maxSplitCount {
		return m, fmt.Errorf("%s is %d (want 1 to %d)", KeySplitCount, m.count, maxSplitCount)
	}
	if _, present := f.Get(KeySplitNo); present || m.count > 1 {
		if m.no, ok = f.Uint(KeySplitNo); !ok {
			return m, fmt.Errorf("split model in %d parts without a valid %s", m.count, KeySplitNo)
		}
	}
	if m.no >= m.count {
		return m, fmt.Errorf("%s is %d but the model has %d parts (%s counts from 0)", KeySplitNo, m.no, m.count, KeySplitNo)
	}
	if _, present := f.Get(KeySplitTensors); present {
		if m.tensors, ok = f.Uint(KeySplitTensors); !ok {
			return m, fmt.Errorf("%s is not a non-negative integer", KeySplitTensors)
		}
		if m.tensors < uint64(len(f.Tensors)) {
			return m, fmt.Errorf("%s is %d but this part alone holds %d tensors", KeySplitTensors, m.tensors, len(f.Tensors))
		}
		m.hasTensors = true
	}
	return m, nil
}

// SplitCount returns the number of files the model is in: 1 unless it is split.
func (f *File) SplitCount() int { return 1 + len(f.parts) }

// TotalSize returns the bytes of all the model's files (FileSize for one file).
func (f *File) TotalSize() uint64 {
	n := f.FileSize
	for _, p := range f.parts {
		n += p.FileSize
	}
	return n
}

// partOf returns the file holding t's data.
func (f *File) partOf(t *TensorInfo) *File {
	if t.part == 0 {
		return f
	}
	return f.parts[t.part-1]
}

// loadPart loads part no (from 1) of the model and names it; a part that does not
// exist gives an error that is ErrPartMissing.
type loadPart func(no int) (f *File, name string, err error)

// join adds the other parts of a split model to f, its first part, named name:
// each is loaded, must say it is that part of a model in that many parts, and adds
// its tensors, none of which may already be in an earlier part; together they must
// hold split.tensors.count tensors. On an error the parts loaded are closed and f
// must be dropped.
func (f *File) join(name string, load loadPart) (err error) {
	m, err := readSplit(f)
	if err != nil || m.count == 1 {
		return err
	}
	if m.no != 0 {
		return splitError("part %d of a split model in %d parts: load its first part", m.no+1, m.count)
	}
	names := make([]string, 1, m.count)
	names[0] = name
	defer func() {
		if err != nil { // the caller drops f
			for _, p := range f.parts {
				p.Close()
			}
			f.parts = nil
		}
	}()
	for no := 1; no < int(m.count); no++ {
		p, pname, err := load(no)
		if err != nil {
			return err
		}
		f.parts = append(f.parts, p)
		names = append(names, pname)
		pm, err := readSplit(p)
		switch {
		case err != nil:
			return &FileError{Path: pname, Err: err}
		case pm.count != m.count || pm.no != uint64(no):
			return &FileError{Path: pname, Err: splitError("says it is part %d of %d, want part %d of %d", pm.no+1, pm.count, no+1, m.count)}
		case pm.hasTensors && m.hasTensors && pm.tensors != m.tensors:
			return &FileError{Path: pname, Err: splitError("%s is %d, the first part says %d", KeySplitTensors, pm.tensors, m.tensors)}
		}
		for i := range p.Tensors {
			t := p.Tensors[i]
			if j, dup := f.tIndex[t.Name]; dup {
				return &FileError{Path: pname, Err: splitError("tensor %q is also in %s", t.Name, filepath.Base(names[f.Tensors[j].part]))}
			}
			t.part = no
			f.tIndex[t.Name] = len(f.Tensors)
			f.Tensors = append(f.Tensors, t)
		}
	}
	if m.hasTensors && m.tensors != uint64(len(f.Tensors)) {
		return splitError("%s is %d but its %d parts hold %d tensors", KeySplitTensors, m.tensors, m.count, len(f.Tensors))
	}
	return nil
}

// openParts is join for a model on disk: the parts are the files named as
// llama.cpp's gguf-split names them beside path, opened by open.
func (f *File) openParts(path string, open func(string) (*File, error)) error {
	m, err := readSplit(f)
	if err != nil || m.count == 1 {
		return err
	}
	suffix := SplitPath("", 0, int(m.count))
	prefix, ok := strings.CutSuffix(path, suffix)
	if m.no == 0 && !ok {
		return splitError("first part of a split model in %d parts, but its name does not end in %s, so the other parts cannot be found", m.count, suffix)
	}
	return f.join(path, func(no int) (*File, string, error) {
		p := SplitPath(prefix, no, int(m.count))
		g, err := open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p, &FileError{Path: p, Err: splitError("%w (part %d of %d)", ErrPartMissing, no+1, m.count)}
		}
		return g, p, err
	})
}

// ParseParts parses a split model held in memory, its parts in order (a model in
// one part may be given alone); the File keeps referring to the slices. Errors are
// *FileErrors naming the part ("part 2").
func ParseParts(parts ...[]byte) (*File, error) {
	if len(parts) == 0 {
		return nil, errors.New("gguf: no parts given")
	}
	load := func(no int) (*File, string, error) {
		name := fmt.Sprintf("part %d", no+1)
		if no >= len(parts) {
			return nil, name, &FileError{Path: name, Err: &SplitError{ErrPartMissing}}
		}
		g, err := parse(parts[no], false)
		if err != nil {
			return nil, name, &FileError{Path: name, Err: err}
		}
		return g, name, nil
	}
	f, _, err := load(0)
	if err != nil {
		return nil, err
	}
	if err = f.join("part 1", load); err == nil && len(parts) > f.SplitCount() {
		err = splitError("%d parts given, the model has %d", len(parts), f.SplitCount())
	}
	if err != nil {
		if _, ok := err.(*FileError); !ok {
			err = &FileError{Path: "part 1", Err: err}
		}
		return nil, err
	}
	return f, nil
}

// WriteSplit writes the model src in parts files as llama.cpp's gguf-split does with
// --split-max-tensors: the tensors in order, as evenly as whole tensors allow (at
// least one a file); the first file has all of src's metadata, every file split.no,
// split.count and split.tensors.count; the files are SplitPath(prefix, k, parts). It
// returns their paths; on an error it removes what it wrote.
func WriteSplit(src *File, prefix string, parts int) (paths []string, err error) {
	n := len(src.Tensors)
	if parts < 1 || parts > n || parts > maxSplitCount {
		return nil, fmt.Errorf("gguf: cannot split %d tensors in %d parts (want 1 to %d)", n, parts, min(n, maxSplitCount))
	}
	defer func() {
		if err != nil {
			for _, p := range paths {
				os.Remove(p)
			}
			paths = nil
		}
	}()
	for k := range parts {
		p := SplitPath(prefix, k, parts)
		paths = append(paths, p)
		if err := writePart(src, p, k, parts, src.Tensors[k*n/parts:(k+1)*n/parts]); err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// writePart writes part k of a model in count parts, with the given tensors of src.
func writePart(src *File, path string, k, count int, tensors []TensorInfo) error {
	fd, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	w := NewWriter(fd)
	if k == 0 {
		for _, kv := range src.KV {
			if !strings.HasPrefix(kv.Key, "split.") {
				w.AddKV(kv.Key, kv.Value)
			}
		}
	}
	w.AddKV(KeySplitNo, uint16(k))
	w.AddKV(KeySplitCount, uint16(count))
	w.AddKV(KeySplitTensors, int32(len(src.Tensors)))
	for _, t := range tensors {
		w.AddTensor(t.Name, t.Type, t.Shape...)
	}
	err = w.WriteHeader()
	for i := 0; i < len(tensors) && err == nil; i++ {
		var tw io.Writer
		if tw, err = w.BeginTensor(tensors[i].Name); err == nil {
			_, err = tw.Write(src.TensorData(&tensors[i]))
		}
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := fd.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gguf: %w", cerr)
	}
	return err
}
