package discover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// layout is how a place keeps its models.
type layout int

const (
	flat   layout = iota // *.gguf in the folder itself
	tree                 // *.gguf anywhere below the folder, named by their path below it
	single               // one file the user named
	hfHub                // Hugging Face's models--org--name/snapshots/REV/…
	ollama               // ollama's manifests/HOST/NS/MODEL/TAG → blobs/sha256-HEX
)

// place is one folder (or file) a source searches.
type place struct {
	source Source
	dir    string
	layout layout
}

// places returns where source s looks under env.
func places(env Env, s Source) []place {
	home := func(elem ...string) string {
		if env.Home == "" {
			return ""
		}
		return filepath.Join(append([]string{env.Home}, elem...)...)
	}
	// cacheHome is XDG_CACHE_HOME, else ~/.cache, as llama.cpp and huggingface_hub use.
	cacheHome := env.getenv("XDG_CACHE_HOME")
	if cacheHome == "" {
		cacheHome = home(".cache")
	}
	under := func(base string, elem ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, elem...)...)
	}
	var out []place
	add := func(dir string, l layout) {
		if dir != "" {
			out = append(out, place{source: s, dir: dir, layout: l})
		}
	}
	switch s {
	case SourceFolder:
		add(env.Dir, flat)
	case SourceList:
		for _, p := range filepath.SplitList(env.getenv("LLMBENCH_MODELS")) {
			if p = env.ExpandPath(p); p == "" {
				continue
			}
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				add(p, single)
			} else {
				add(p, tree)
			}
		}
	case SourceLlamaCpp:
		add(firstOf(env.getenv("LLAMA_CACHE"), under(cacheHome, "llama.cpp")), tree)
	case SourceHuggingFace:
		dir := env.getenv("HF_HUB_CACHE")
		if dir == "" {
			dir = firstOf(under(env.getenv("HF_HOME"), "hub"), under(cacheHome, "huggingface", "hub"))
		}
		add(dir, hfHub)
	case SourceOllama:
		add(firstOf(env.getenv("OLLAMA_MODELS"), home(".ollama", "models")), ollama)
	case SourceLMStudio:
		add(home(".lmstudio", "models"), tree)
		add(home(".cache", "lm-studio", "models"), tree)
	}
	return out
}

// firstOf returns the first non-empty string.
func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// search lists the candidates of the place, with why it could not be searched in full.
func (p place) search(ctx context.Context) ([]candidate, error) {
	if p.layout == single {
		return []candidate{{name: filepath.Base(p.dir), path: p.dir, source: p.source, place: p.dir}}, nil
	}
	if st, err := os.Stat(p.dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", p.dir)
	}
	w := &walker{ctx: ctx}
	switch p.layout {
	case flat, tree:
		files, err := w.collect(p.dir, p.layout == tree)
		return p.group(files, func(f string) string { return rel(p.dir, f) }), err
	case hfHub:
		return p.searchHub(w)
	case ollama:
		return p.searchOllama(w)
	}
	return nil, nil
}

// searchHub lists the GGUF files of every snapshot of every model repository in a
// Hugging Face hub cache, named "org/name/path-in-repo".
func (p place) searchHub(w *walker) ([]candidate, error) {
	repos, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, r := range repos {
		id, ok := strings.CutPrefix(r.Name(), "models--")
		if !ok || !r.IsDir() {
			continue
		}
		repo := strings.Replace(id, "--", "/", 1)
		snaps := filepath.Join(p.dir, r.Name(), "snapshots")
		revs, err := os.ReadDir(snaps)
		if err != nil {
			continue // a repository being downloaded has no snapshot yet
		}
		for _, rev := range revs {
			root := filepath.Join(snaps, rev.Name())
			files, err := w.collect(root, true)
			out = append(out, p.group(files, func(f string) string { return repo + "/" + rel(root, f) })...)
			if err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// rel is f's path below root with forward slashes (f itself when not below root).
func rel(root, f string) string {
	r, err := filepath.Rel(root, f)
	if err != nil {
		return f
	}
	return filepath.ToSlash(r)
}

// splitName matches a part of a split model: prefix-00001-of-00003.gguf.
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.(?i:gguf)$`)

// group turns files into candidates, the parts of a split model into one (its first
// part, or its lowest part found with an error when the first is missing).
func (p place) group(files []string, name func(string) string) []candidate {
	type key struct{ dir, prefix, count string }
	parts := map[key][]string{}
	var order []key
	var out []candidate
	for _, f := range files {
		m := splitName.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			out = append(out, candidate{name: name(f), path: f, source: p.source, place: p.dir})
			continue
		}
		k := key{filepath.Dir(f), m[1], m[3]}
		if parts[k] == nil {
			order = append(order, k)
		}
		parts[k] = append(parts[k], f)
	}
	for _, k := range order {
		ps := parts[k]
		slices.Sort(ps) // zero-padded numbers: the first part sorts first
		c := candidate{name: name(ps[0]), path: ps[0], parts: ps, source: p.source, place: p.dir}
		n, _ := strconv.Atoi(k.count)
		if m := splitName.FindStringSubmatch(filepath.Base(ps[0])); m[2] != "00001" {
			c.err = fmt.Errorf("%s: split model without its first part (%d of %d parts found)", filepath.Base(ps[0]), len(ps), n)
		}
		out = append(out, c)
	}
	return out
}

// walker visits folders within the search limits.
type walker struct {
	ctx     context.Context
	entries int
}

// errTooMany ends the search of a place that holds more entries than a search visits.
var errTooMany = fmt.Errorf("more than %d entries: searched in part", maxEntries)

// collect returns the *.gguf files in dir (and below, when deep, down to maxDepth
// levels), in name order.
func (w *walker) collect(dir string, deep bool) ([]string, error) {
	depth := 1
	if deep {
		depth = maxDepth
	}
	var out []string
	err := w.walk(dir, depth, func(path string, _ int) {
		if strings.EqualFold(filepath.Ext(path), ".gguf") {
			out = append(out, path)
		}
	})
	return out, err
}

// walk calls found for every entry that is not a folder (links to files included)
// in dir and its subfolders, down to depth levels (1: dir itself), in name order;
// level is the entry's (1 in dir). Links to folders are not followed, so a loop of
// links cannot trap the search; names starting with a dot are skipped (partial
// downloads, lock folders). An unreadable subfolder costs only itself.
func (w *walker) walk(dir string, depth int, found func(path string, level int)) error {
	var visit func(dir string, level int) error
	visit = func(dir string, level int) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if level == 1 {
				return err
			}
			return nil
		}
		for _, e := range ents {
			if err := w.ctx.Err(); err != nil {
				return err
			}
			if w.entries++; w.entries > maxEntries {
				return errTooMany
			}
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if !e.IsDir() {
				found(path, level)
			} else if level < depth {
				if err := visit(path, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return visit(dir, 1)
}
