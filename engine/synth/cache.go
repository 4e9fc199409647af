package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"llmbench/engine/gguf"
)

// DefaultCacheDir returns where synthetic models are kept when no --cache-dir is given:
// llmbench/synth under the user's cache directory (os.UserCacheDir).
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("synth: no cache directory (use --cache-dir): %w", err)
	}
	return filepath.Join(d, "llmbench", "synth"), nil
}

// Path returns the cache file of a shape and type with the default seed. An empty
// cacheDir means DefaultCacheDir (or the system temp dir if there is none). Names are
// used as given apart from case: "llama-1b", "Q4_K_M" → llama-1b-Q4_K_M.gguf.
func Path(cacheDir, shape, typ string) string {
	return PathSeed(cacheDir, shape, typ, DefaultSeed)
}

// PathSeed is Path for a given seed; non-default seeds get a "-seedN" suffix.
func PathSeed(cacheDir, shape, typ string, seed uint64) string {
	if cacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			d = filepath.Join(os.TempDir(), "llmbench-synth")
		}
		cacheDir = d
	}
	name := strings.ToLower(shape) + "-" + strings.ToUpper(typ)
	if ft, err := ParseFileType(typ); err == nil {
		name = strings.ToLower(shape) + "-" + ft.Name
	}
	if seed != DefaultSeed {
		name += fmt.Sprintf("-seed%d", seed)
	}
	return filepath.Join(cacheDir, name+".gguf")
}

// Ensure returns the path of the cached synthetic model for shape, type and seed, writing
// it first if it is missing or stale. See Cache.Ensure.
func Ensure(ctx context.Context, cacheDir, shape, typ string, seed uint64, progress func(done, total int64)) (string, error) {
	return Cache{Dir: cacheDir}.Ensure(ctx, shape, typ, seed, progress)
}

// Cache is a directory of synthetic models.
type Cache struct {
	// Dir is the cache directory; empty means DefaultCacheDir.
	Dir string
	// FreeSpace returns the bytes available to an unprivileged writer in dir; nil
	// means statfs(2). Tests replace it.
	FreeSpace func(dir string) (uint64, error)
}

// spaceMargin is kept free on top of the file itself: 64 MiB plus 1% of the file.
func spaceMargin(size int64) int64 { return 64<<20 + size/100 }

// Ensure returns the path of the model, reusing a cached file when it exists with the
// exact expected size and header (shape, seed and generator version). Otherwise it
// checks that the disk has room for the whole file (plus a margin) and refuses up front
// if not, then writes a temporary file in the same directory, syncs it and renames it
// into place, so a cached file is always complete. If ctx is cancelled the temporary
// file is removed and ctx's error returned.
func (c Cache) Ensure(ctx context.Context, shape, typ string, seed uint64, progress func(done, total int64)) (string, error) {
	spec, err := NewSpec(shape, typ, seed)
	if err != nil {
		return "", err
	}
	dir := c.Dir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	path := PathSeed(dir, spec.Shape.Name, spec.Type.Name, seed)
	size, err := spec.FileSize()
	if err != nil {
		return "", err
	}
	if cached(path, spec, size) {
		if progress != nil {
			progress(size, size) // Write's units: bytes of the file
		}
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("synth: cache directory: %w", err)
	}
	if err := c.WriteFile(ctx, path, spec, progress); err != nil {
		return "", err
	}
	return path, nil
}

// WriteFile writes the model of spec to path: it refuses up front, with a message
// naming the sizes, when the filesystem lacks room for the whole file plus a margin,
// then writes a temporary file beside path and renames it into place, so path never
// holds a partial model. Cancelling ctx removes the temporary file.
func (c Cache) WriteFile(ctx context.Context, path string, spec Spec, progress func(done, total int64)) error {
	size, err := spec.FileSize()
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	avail, err := c.free(dir)
	if err != nil {
		return err
	}
	if need := size + spaceMargin(size); uint64(need) > avail {
		return fmt.Errorf("synth: %s needs %s in %s but only %s is free (%s with margin); free some space or pick another --cache-dir",
			spec, human(size), dir, human(int64(avail)), human(need))
	}
	return writeFile(ctx, path, spec, progress)
}

// free returns the bytes free for a writer in dir's filesystem, asking about dir's
// nearest existing parent when dir does not exist yet.
func (c Cache) free(dir string) (uint64, error) {
	free := c.FreeSpace
	if free == nil {
		free = statfsFree
	}
	at := dir
	for {
		if _, err := os.Stat(at); err == nil {
			break
		}
		up := filepath.Dir(at)
		if up == at {
			break
		}
		at = up
	}
	avail, err := free(at)
	if err != nil {
		return 0, fmt.Errorf("synth: checking free space in %s: %w", dir, err)
	}
	return avail, nil
}

// Plan is what Ensure would do for a synthetic model, known without writing it: the
// file, its exact size, whether it is cached already, and the room on the disk.
type Plan struct {
	Spec Spec
	// Path is the cache file.
	Path string
	// Size is the file's exact size in bytes.
	Size int64
	// Cached: the file is there and complete; Ensure writes nothing.
	Cached bool
	// Free is the bytes free in the cache directory's filesystem.
	Free uint64
	// Need is what Ensure requires free before writing: Size plus a margin (0 when Cached).
	Need int64
}

// Fits reports whether Ensure would find the room to write the model (or need none).
func (p Plan) Fits() bool { return p.Cached || uint64(p.Need) <= p.Free }

// String is a line for a setup screen: "llama-1b Q4_0: 738.9 MiB to write, 41.2 GiB
// free", "… cached", or "… needs 3.9 GiB, 1.2 GiB free".
func (p Plan) String() string {
	switch {
	case p.Cached:
		return fmt.Sprintf("%s: %s, cached", p.Spec, human(p.Size))
	case !p.Fits():
		return fmt.Sprintf("%s: needs %s with margin, only %s free", p.Spec, human(p.Need), human(int64(p.Free)))
	}
	return fmt.Sprintf("%s: %s to write, %s free", p.Spec, human(p.Size), human(int64(p.Free)))
}

// Plan says what Ensure would do for shape, type and seed, without writing: the size
// comes from the declared tensors and metadata, the free space from statfs (or
// c.FreeSpace). It reads the cached file's header when there is one.
func (c Cache) Plan(shape, typ string, seed uint64) (Plan, error) {
	spec, err := NewSpec(shape, typ, seed)
	if err != nil {
		return Plan{}, err
	}
	dir := c.Dir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return Plan{}, err
		}
	}
	p := Plan{Spec: spec, Path: PathSeed(dir, spec.Shape.Name, spec.Type.Name, seed)}
	if p.Size, err = spec.FileSize(); err != nil {
		return Plan{}, err
	}
	p.Cached = cached(p.Path, spec, p.Size)
	if !p.Cached {
		p.Need = p.Size + spaceMargin(p.Size)
	}
	if p.Free, err = c.free(dir); err != nil {
		return p, err
	}
	return p, nil
}

// cached reports whether path holds the model of spec: the right size and a header
// naming the same shape, seed and generator version.
func cached(path string, spec Spec, size int64) bool {
	st, err := os.Stat(path)
	if err != nil || st.Size() != size {
		return false
	}
	f, err := gguf.OpenHeader(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sh, _ := f.String("llmbench.synth.shape")
	sd, okSeed := f.Uint("llmbench.synth.seed")
	v, _ := f.Uint("llmbench.synth.version")
	ft, _ := f.Uint("general.file_type")
	return sh == spec.Shape.Name && okSeed && sd == spec.Seed && v == Version && ft == uint64(spec.Type.ID)
}

// writeFile writes spec to a temporary file beside path and renames it into place.
func writeFile(ctx context.Context, path string, spec Spec, progress func(done, total int64)) error {
	return atomicWrite(path, "synth", func(w io.Writer) error { return Write(ctx, w, spec, progress) })
}

// atomicWrite calls write on a temporary file beside path, then syncs it and renames it
// into place, so path never holds a partial file; the temporary file is removed when
// write fails. what prefixes errors ("synth"); a cancellation is returned as it is.
func atomicWrite(path, what string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("%s: writing %s: %w", what, path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// human formats a byte count ("3.9 GiB").
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
