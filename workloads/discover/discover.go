// Package discover finds the GGUF models already on a machine, where a newcomer's
// tools put them: the current folder, llama.cpp's cache, ollama's store, the Hugging
// Face hub cache, LM Studio's models folders and the folders and files listed in
// LLMBENCH_MODELS. Each model is described from its GGUF header only (name, size,
// llama.cpp's file type, architecture, where it was found), so a search over many
// gigabytes takes milliseconds. A file that cannot be read is listed with the
// reason, never skipped silently and never a crash. The package also checks a path
// a user typed (CheckModelFile) before a run is queued.
package discover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Env is what discovery reads from its surroundings, so tests can build fake caches
// in a temporary folder.
type Env struct {
	// Getenv reads an environment variable (nil: none is set).
	Getenv func(string) string
	// Home is the user's home folder ("": the places under it are not searched).
	Home string
	// Dir is the current folder ("": not searched).
	Dir string
}

// OSEnv is the process's environment, home folder and working folder.
func OSEnv() Env {
	home, _ := os.UserHomeDir()
	dir, _ := os.Getwd()
	return Env{Getenv: os.Getenv, Home: home, Dir: dir}
}

// getenv returns the variable, trimmed ("" when Getenv is nil).
func (e Env) getenv(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(e.Getenv(key))
}

// Source names where a model was found.
type Source string

// The places Find searches, in the order it searches them (and lists what it finds).
const (
	SourceFolder      Source = "folder"          // the current folder (not its subfolders)
	SourceList        Source = "LLMBENCH_MODELS" // files and folders the user listed
	SourceLlamaCpp    Source = "llama.cpp"       // LLAMA_CACHE, else ~/.cache/llama.cpp
	SourceHuggingFace Source = "huggingface"     // HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
	SourceOllama      Source = "ollama"          // OLLAMA_MODELS, else ~/.ollama/models
	SourceLMStudio    Source = "lm-studio"       // ~/.lmstudio/models, ~/.cache/lm-studio/models
)

// sourceOrder ranks the sources for sorting.
var sourceOrder = []Source{SourceFolder, SourceList, SourceLlamaCpp, SourceHuggingFace, SourceOllama, SourceLMStudio}

// Model is one GGUF model found.
type Model struct {
	// Name is how its source names it: the file name in a folder, "llama3:8b" in
	// ollama, "org/repo/file.gguf" in the Hugging Face cache, the path below the
	// models folder in llama.cpp's cache and LM Studio.
	Name string
	// Path is the file to open (a split model's first part); under the HF cache and
	// ollama it is the path as found (a snapshot link, a blob), not resolved.
	Path string
	// Size is the bytes on disk (all parts of a split model).
	Size int64
	// Type is the quantization as llama.cpp describes it ("Q4_K - Medium"), from
	// general.file_type ("…(guessed)" from the tensors when absent); "" when unread.
	Type string
	// Arch is general.architecture ("llama", "qwen2"); "" when unread.
	Arch string
	// Source and Place say where it was found: the kind of place and its folder (for
	// LLMBENCH_MODELS, the entry of the list).
	Source Source
	Place  string
	// Parts is the number of files of a split model (name-00001-of-00003.gguf), 1 otherwise.
	Parts int
	// Also lists the other names the same file was found under (an ollama tag and
	// its alias, a link in another place), in the order found.
	Also []string
	// Err says why the model cannot be run (unreadable, not GGUF, a part of a split
	// model missing or wrong, a missing ollama blob); nil when it can.
	Err error
}

// Place is a folder Find searched.
type Place struct {
	Source Source
	Path   string
	// Err is why it was not searched in full: it does not exist (errors.Is
	// fs.ErrNotExist), cannot be read, or holds more entries than a search visits.
	Err error
}

// Found is what Find returns: the models, sorted by source then name, and every
// place searched.
type Found struct {
	Models []Model
	Places []Place
}

// Limits of one search: how deep below a place it goes and how many entries of a
// place it visits, so a path list naming "/" costs seconds, not minutes.
const (
	maxDepth   = 8
	maxEntries = 20000
)

// candidate is a file a source offers: a GGUF file (or an ollama blob), named as the
// source names it, with the other parts of a split model.
type candidate struct {
	name, path string
	parts      []string // every part, path first; nil unless split
	source     Source
	place      string
	err        error // known before reading (a missing blob, a bad manifest)
}

// Find searches every place of env and describes each model found once (the same
// file reached twice, through a link or two sources, is listed under the first). It
// stops early, returning what it has, when ctx is done.
func Find(ctx context.Context, env Env) Found {
	var out Found
	var cands []candidate
	for _, s := range sourceOrder {
		for _, pl := range places(env, s) {
			c, err := pl.search(ctx)
			out.Places = append(out.Places, Place{Source: s, Path: pl.dir, Err: err})
			cands = append(cands, c...)
		}
	}
	seen := map[string]int{} // real path → index in out.Models, -1 when not listed
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		key := c.path
		if real, err := filepath.EvalSymlinks(c.path); err == nil {
			key = real
		}
		if i, dup := seen[key]; dup {
			if i >= 0 && c.name != out.Models[i].Name && !slices.Contains(out.Models[i].Also, c.name) {
				out.Models[i].Also = append(out.Models[i].Also, c.name)
			}
			continue
		}
		seen[key] = -1
		if m, keep := describe(c); keep {
			seen[key] = len(out.Models)
			out.Models = append(out.Models, m)
		}
	}
	rank := func(s Source) int { return slices.Index(sourceOrder, s) }
	slices.SortStableFunc(out.Models, func(a, b Model) int {
		return cmp.Or(cmp.Compare(rank(a.Source), rank(b.Source)),
			cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// describe reads c's header. It reports false for a file that is a GGUF but not a
// model one can run alone (a vision projector, which llama.cpp loads beside a model).
func describe(c candidate) (Model, bool) {
	m := Model{Name: c.name, Path: c.path, Source: c.source, Place: c.place, Parts: max(1, len(c.parts)), Err: c.err}
	if m.Err != nil {
		return m, true
	}
	parts := c.parts
	if parts == nil {
		parts = []string{c.path}
	}
	for _, p := range parts {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			m.Err = fmt.Errorf("%s: %w", p, unwrapPath(err))
			return m, true
		case !st.Mode().IsRegular():
			m.Err = fmt.Errorf("%s: not a regular file", p)
			return m, true
		}
		m.Size += st.Size()
	}
	f, err := openHeader(c.path)
	if err != nil {
		m.Err = err
		return m, true
	}
	defer f.Close()
	m.Arch, m.Type = f.Architecture(), f.FileType()
	if isProjector(f) {
		return m, false
	}
	m.Err = checkArch(filepath.Base(c.path), f)
	return m, true
}

// unwrapPath drops the operation and path of a *fs.PathError, which the caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
