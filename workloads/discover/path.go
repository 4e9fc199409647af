package discover

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"llmbench/engine/gguf"
	"llmbench/engine/model"
)

// ExpandPath cleans up a path a user typed or pasted: surrounding blanks and one pair
// of matching quotes go, a file:// prefix goes, and a leading ~ or ~/ becomes the
// home folder (~user and environment variables are left as typed).
func (e Env) ExpandPath(p string) string {
	p = strings.TrimSpace(p)
	if len(p) >= 2 && (p[0] == '"' || p[0] == '\'') && p[len(p)-1] == p[0] {
		p = strings.TrimSpace(p[1 : len(p)-1])
	}
	p = strings.TrimPrefix(p, "file://")
	switch {
	case e.Home == "":
	case p == "~":
		return e.Home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(e.Home, p[2:])
	}
	return p
}

// ExpandPath is Env.ExpandPath with the user's home folder.
func ExpandPath(p string) string {
	home, _ := os.UserHomeDir()
	return Env{Home: home}.ExpandPath(p)
}

// CheckModelFile says in one line why path is not a GGUF model llmbench can run
// (nil: it is): it exists, is a regular file, starts with the GGUF magic, has a
// header that parses (with every part of a split model, given its first), is not a
// vision projector, and names an architecture the engine has. It reads the header
// only, skipping the vocabulary (about a millisecond), but a screen that checks on
// every frame should still keep the answer per path. Give it a path after ExpandPath.
//
//	README.md: not a GGUF file (magic "# ll")
func CheckModelFile(path string) error {
	f, err := openHeader(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if isProjector(f) {
		return fmt.Errorf("%s: a vision projector (mmproj), not a model: pick the model it goes with", path)
	}
	return checkArch(path, f)
}

// checkArch says why the engine cannot build f's architecture (nil: it can).
func checkArch(path string, f *gguf.File) error {
	arch := f.Architecture()
	if arch == "" {
		return fmt.Errorf("%s: no general.architecture: not a model", path)
	}
	if have := model.Architectures(); !slices.Contains(have, arch) {
		return fmt.Errorf("%s: architecture %s is not supported (llmbench runs %s)", path, arch, strings.Join(have, ", "))
	}
	return nil
}

// isProjector reports whether f is a multimodal projector (llama.cpp's mmproj file),
// which runs only beside a language model.
func isProjector(f *gguf.File) bool {
	t, _ := f.String("general.type")
	return t == "mmproj" || f.Architecture() == "clip"
}

// openHeader opens the GGUF file at path for its header (gguf.OpenHeader: array
// values skipped) after checking, without blocking on a pipe or a device, that it is
// a regular file that starts with the magic; every error is one line that starts
// with path.
func openHeader(path string) (*gguf.File, error) {
	if path == "" {
		return nil, errors.New("no model file given")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file", path)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	case st.IsDir():
		return nil, fmt.Errorf("%s: a folder, not a GGUF file", path)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	magic := make([]byte, len(gguf.Magic))
	n, err := io.ReadFull(fd, magic)
	fd.Close()
	switch {
	case n < len(magic) && (err == io.EOF || err == io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%s: not a GGUF file (%d bytes long)", path, n)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	case string(magic) != gguf.Magic:
		return nil, fmt.Errorf("%s: not a GGUF file (magic %q)", path, magic)
	}
	f, err := gguf.OpenHeader(path)
	if err != nil {
		// gguf's error names the file at fault: path or one part of a split model.
		var fe *gguf.FileError
		if !errors.As(err, &fe) {
			return nil, fmt.Errorf("%s: bad GGUF header: %w", path, err)
		}
		path = fe.Path
		var se *gguf.SplitError
		if errors.As(fe.Err, &se) {
			return nil, fmt.Errorf("%s: %w", path, fe.Err)
		}
		return nil, fmt.Errorf("%s: bad GGUF header: %w", path, fe.Err)
	}
	return f, nil
}
