package discover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// writeModel writes a small GGUF model (one 32×4 Q8_0 matrix) at path with the given
// metadata on top of a llama architecture and file type 15 (Q4_K_M); a nil value
// removes a key. It returns the file's size.
func writeModel(t *testing.T, path string, kv map[string]any) int64 {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	all := map[string]any{"general.architecture": "llama", "general.file_type": uint32(15)}
	for k, v := range kv {
		all[k] = v
	}
	w := gguf.NewWriter(fd)
	for _, k := range []string{"general.architecture", "general.type", "general.file_type", "split.no", "split.count"} {
		if v := all[k]; v != nil {
			w.AddKV(k, v)
		}
	}
	tensor := "blk.0.ffn_up.weight" // each part of a split model its own
	if no, ok := all["split.no"].(uint16); ok {
		tensor = fmt.Sprintf("blk.%d.ffn_up.weight", no)
	}
	w.AddTensor(tensor, kernels.Q8_0, 32, 4)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	tw, err := w.BeginTensor(tensor)
	if err != nil {
		t.Fatal(err)
	}
	tw.Write(make([]byte, 4*34))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return int64(w.Size())
}

// env is a fake environment: HOME and the current folder in a temp dir, variables
// from vars.
func env(t *testing.T, vars map[string]string) Env {
	root := t.TempDir()
	e := Env{Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "cwd"),
		Getenv: func(k string) string { return vars[k] }}
	for _, d := range []string{e.Home, e.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// byName returns the models found, by name.
func byName(t *testing.T, f Found) map[string]Model {
	t.Helper()
	out := map[string]Model{}
	for _, m := range f.Models {
		if _, dup := out[m.Name]; dup {
			t.Errorf("%s listed twice", m.Name)
		}
		out[m.Name] = m
	}
	return out
}

// want checks one model found: its source, path, size, type, architecture, no error.
func want(t *testing.T, got map[string]Model, name string, src Source, path string, size int64) {
	t.Helper()
	m, ok := got[name]
	if !ok {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		t.Fatalf("%s not found; found %q", name, names)
	}
	if m.Source != src || m.Path != path || m.Size != size || m.Type != "Q4_K - Medium" || m.Arch != "llama" || m.Err != nil || m.Parts != 1 {
		t.Errorf("%s = %+v; want source %s, path %s, size %d, Q4_K - Medium llama, no error", name, m, src, path, size)
	}
}

func TestFolder(t *testing.T) {
	e := env(t, nil)
	size := writeModel(t, filepath.Join(e.Dir, "tiny.gguf"), nil)
	writeModel(t, filepath.Join(e.Dir, "sub", "deeper.gguf"), nil) // the current folder is not searched below
	os.WriteFile(filepath.Join(e.Dir, "README.md"), []byte("# llmbench"), 0o644)
	got := byName(t, Find(context.Background(), e))
	want(t, got, "tiny.gguf", SourceFolder, filepath.Join(e.Dir, "tiny.gguf"), size)
	if len(got) != 1 {
		t.Errorf("found %d models; want only tiny.gguf: %v", len(got), got)
	}
}

func TestLlamaCppCache(t *testing.T) {
	e := env(t, nil)
	dir := filepath.Join(e.Home, ".cache", "llama.cpp")
	size := writeModel(t, filepath.Join(dir, "bartowski_Llama-3.2-1B-Instruct-GGUF_Llama-3.2-1B-Instruct-Q4_K_M.gguf"), nil)
	os.WriteFile(filepath.Join(dir, "bartowski_Llama-3.2-1B-Instruct-GGUF_Llama-3.2-1B-Instruct-Q4_K_M.gguf.json"), []byte("{}"), 0o644)
	writeModel(t, filepath.Join(dir, ".partial.gguf"), nil) // a download in progress
	// A loop of folders is not followed.
	if err := os.Symlink(dir, filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	got := byName(t, Find(context.Background(), e))
	want(t, got, "bartowski_Llama-3.2-1B-Instruct-GGUF_Llama-3.2-1B-Instruct-Q4_K_M.gguf", SourceLlamaCpp,
		filepath.Join(dir, "bartowski_Llama-3.2-1B-Instruct-GGUF_Llama-3.2-1B-Instruct-Q4_K_M.gguf"), size)
	if len(got) != 1 {
		t.Errorf("found %v; want one model", got)
	}

	// LLAMA_CACHE replaces the default; XDG_CACHE_HOME moves it.
	other := filepath.Join(t.TempDir(), "llama-cache")
	size = writeModel(t, filepath.Join(other, "sub", "m.gguf"), nil)
	e.Getenv = func(k string) string { return map[string]string{"LLAMA_CACHE": other}[k] }
	got = byName(t, Find(context.Background(), e))
	want(t, got, "sub/m.gguf", SourceLlamaCpp, filepath.Join(other, "sub", "m.gguf"), size)
	if len(got) != 1 {
		t.Errorf("with LLAMA_CACHE found %v; want only its model", got)
	}
	xdg := filepath.Join(t.TempDir(), "xdg")
	size = writeModel(t, filepath.Join(xdg, "llama.cpp", "x.gguf"), nil)
	e.Getenv = func(k string) string { return map[string]string{"XDG_CACHE_HOME": xdg}[k] }
	want(t, byName(t, Find(context.Background(), e)), "x.gguf", SourceLlamaCpp, filepath.Join(xdg, "llama.cpp", "x.gguf"), size)
}

func TestHuggingFaceSnapshot(t *testing.T) {
	for _, c := range []struct {
		name string
		vars func(root string) map[string]string
		hub  func(e Env, root string) string
	}{
		{"default", func(string) map[string]string { return nil },
			func(e Env, _ string) string { return filepath.Join(e.Home, ".cache", "huggingface", "hub") }},
		{"HF_HOME", func(root string) map[string]string { return map[string]string{"HF_HOME": filepath.Join(root, "hf")} },
			func(_ Env, root string) string { return filepath.Join(root, "hf", "hub") }},
		{"HF_HUB_CACHE over HF_HOME", func(root string) map[string]string {
			return map[string]string{"HF_HOME": filepath.Join(root, "hf"), "HF_HUB_CACHE": filepath.Join(root, "hubcache")}
		}, func(_ Env, root string) string { return filepath.Join(root, "hubcache") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			e := env(t, c.vars(root))
			hub := c.hub(e, root)
			repo := filepath.Join(hub, "models--bartowski--Qwen2.5-0.5B-GGUF")
			blob := filepath.Join(repo, "blobs", "3f1c0a9e")
			size := writeModel(t, blob, nil)
			// Two revisions link to the same blob: listed once.
			for _, rev := range []string{"0123abc", "4567def"} {
				snap := filepath.Join(repo, "snapshots", rev, "quants")
				os.MkdirAll(snap, 0o755)
				if err := os.Symlink(filepath.Join("..", "..", "..", "blobs", "3f1c0a9e"), filepath.Join(snap, "Qwen2.5-0.5B-Q4_K_M.gguf")); err != nil {
					t.Fatal(err)
				}
			}
			writeModel(t, filepath.Join(repo, "snapshots", "0123abc", "mmproj-f16.gguf"), map[string]any{"general.architecture": "clip"})
			os.MkdirAll(filepath.Join(hub, "models--in--progress", "blobs"), 0o755) // no snapshot yet
			got := byName(t, Find(context.Background(), e))
			want(t, got, "bartowski/Qwen2.5-0.5B-GGUF/quants/Qwen2.5-0.5B-Q4_K_M.gguf", SourceHuggingFace,
				filepath.Join(repo, "snapshots", "0123abc", "quants", "Qwen2.5-0.5B-Q4_K_M.gguf"), size)
			if len(got) != 1 {
				t.Errorf("found %v; want the model once and no projector", got)
			}
		})
	}
}

// writeManifest writes an ollama manifest whose model layer has digest.
func writeManifest(t *testing.T, models, name, digest string) {
	t.Helper()
	p := filepath.Join(models, "manifests", filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(p), 0o755)
	body := `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:` + strings.Repeat("c", 64) + `","size":485},
"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"` + digest + `","size":4661211424},
{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:` + strings.Repeat("d", 64) + `","size":254}]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOllama(t *testing.T) {
	e := env(t, nil)
	models := filepath.Join(e.Home, ".ollama", "models")
	hex := strings.Repeat("ab", 32)
	blob := filepath.Join(models, "blobs", "sha256-"+hex)
	size := writeModel(t, blob, nil)
	writeManifest(t, models, "registry.ollama.ai/library/llama3/8b", "sha256:"+hex)
	writeManifest(t, models, "registry.ollama.ai/library/llama3/latest", "sha256:"+hex) // an alias of 8b
	hex2 := strings.Repeat("12", 32)
	size2 := writeModel(t, filepath.Join(models, "blobs", "sha256-"+hex2), nil)
	writeManifest(t, models, "registry.ollama.ai/someone/tiny/q4", "sha256:"+hex2)
	writeManifest(t, models, "registry.ollama.ai/library/gone/latest", "sha256:"+strings.Repeat("ef", 32))
	writeManifest(t, models, "registry.ollama.ai/library/evil/latest", "sha256:../../../../etc/passwd")
	p := filepath.Join(models, "manifests", "registry.ollama.ai", "library", "garbage", "latest")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("{not json"), 0o644)

	got := byName(t, Find(context.Background(), e))
	want(t, got, "llama3:8b", SourceOllama, blob, size)
	if also := got["llama3:8b"].Also; len(also) != 1 || also[0] != "llama3:latest" {
		t.Errorf("llama3:8b also named %q; want [llama3:latest]", also)
	}
	want(t, got, "someone/tiny:q4", SourceOllama, filepath.Join(models, "blobs", "sha256-"+hex2), size2)
	for name, msg := range map[string]string{"gone:latest": "no such file", "evil:latest": "is not sha256:HEX", "garbage:latest": "invalid character"} {
		if m := got[name]; m.Err == nil || !strings.Contains(m.Err.Error(), msg) {
			t.Errorf("%s: error %v; want one saying %q", name, m.Err, msg)
		}
	}

	// OLLAMA_MODELS moves the store.
	other := filepath.Join(t.TempDir(), "store")
	size = writeModel(t, filepath.Join(other, "blobs", "sha256-"+hex), nil)
	writeManifest(t, other, "example.com/team/m/v1", "sha256:"+hex)
	e.Getenv = func(k string) string { return map[string]string{"OLLAMA_MODELS": other}[k] }
	got = byName(t, Find(context.Background(), e))
	want(t, got, "example.com/team/m:v1", SourceOllama, filepath.Join(other, "blobs", "sha256-"+hex), size)
	if len(got) != 1 {
		t.Errorf("with OLLAMA_MODELS found %v; want only its model", got)
	}
}

func TestLMStudio(t *testing.T) {
	e := env(t, nil)
	a := filepath.Join(e.Home, ".lmstudio", "models", "lmstudio-community", "gemma-GGUF", "m-Q4_K_M.gguf")
	b := filepath.Join(e.Home, ".cache", "lm-studio", "models", "TheBloke", "old-GGUF", "old.Q4_K_M.gguf")
	sa, sb := writeModel(t, a, nil), writeModel(t, b, nil)
	got := byName(t, Find(context.Background(), e))
	want(t, got, "lmstudio-community/gemma-GGUF/m-Q4_K_M.gguf", SourceLMStudio, a, sa)
	want(t, got, "TheBloke/old-GGUF/old.Q4_K_M.gguf", SourceLMStudio, b, sb)
}

func TestUserList(t *testing.T) {
	root := t.TempDir()
	vars := map[string]string{}
	e := env(t, vars)
	file := filepath.Join(e.Home, "models", "named.gguf")
	sf := writeModel(t, file, nil)
	dir := filepath.Join(root, "dir")
	sd := writeModel(t, filepath.Join(dir, "a", "inside.gguf"), nil)
	vars["LLMBENCH_MODELS"] = "~/models/named.gguf" + string(os.PathListSeparator) + dir +
		string(os.PathListSeparator) + filepath.Join(root, "missing")
	f := Find(context.Background(), e)
	got := byName(t, f)
	want(t, got, "named.gguf", SourceList, file, sf)
	want(t, got, "a/inside.gguf", SourceList, filepath.Join(dir, "a", "inside.gguf"), sd)
	var missing bool
	for _, p := range f.Places {
		if p.Source == SourceList && p.Path == filepath.Join(root, "missing") {
			missing = errors.Is(p.Err, fs.ErrNotExist)
		}
	}
	if !missing {
		t.Errorf("places %+v: want the missing entry with ErrNotExist", f.Places)
	}
}

func TestDedupeByRealPath(t *testing.T) {
	vars := map[string]string{}
	e := env(t, vars)
	real := filepath.Join(e.Dir, "m.gguf")
	size := writeModel(t, real, nil)
	link := filepath.Join(e.Home, ".cache", "llama.cpp", "link.gguf")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	vars["LLMBENCH_MODELS"] = real
	got := byName(t, Find(context.Background(), e))
	want(t, got, "m.gguf", SourceFolder, real, size)
	if len(got) != 1 || !slices.Equal(got["m.gguf"].Also, []string{"link.gguf"}) {
		t.Errorf("found %v; want the file once, from the first source, also named link.gguf", got)
	}
}

func TestSplitListedOnce(t *testing.T) {
	e := env(t, nil)
	dir := filepath.Join(e.Home, ".cache", "llama.cpp")
	var size int64
	for i, n := range []string{"00001", "00002", "00003"} {
		kv := map[string]any{"split.no": uint16(i), "split.count": uint16(3)}
		if i > 0 {
			kv["general.architecture"], kv["general.file_type"] = nil, nil
		}
		size += writeModel(t, filepath.Join(dir, "big-"+n+"-of-00003.gguf"), kv)
	}
	writeModel(t, filepath.Join(dir, "half-00001-of-00002.gguf"), map[string]any{"split.no": uint16(0), "split.count": uint16(2)})
	writeModel(t, filepath.Join(dir, "tail-00002-of-00002.gguf"), map[string]any{"split.count": uint16(2)})
	got := byName(t, Find(context.Background(), e))
	if len(got) != 3 {
		t.Fatalf("found %v; want big, half and tail once each", got)
	}
	big := got["big-00001-of-00003.gguf"]
	if big.Parts != 3 || big.Size != size || big.Type != "Q4_K - Medium" || big.Err != nil {
		t.Errorf("big = %+v; want 3 parts, %d bytes, runnable", big, size)
	}
	if m, want := got["half-00001-of-00002.gguf"], filepath.Join(dir, "half-00002-of-00002.gguf")+": missing (part 2 of 2)"; m.Err == nil || m.Err.Error() != want {
		t.Errorf("half: %v; want %s", m.Err, want)
	}
	if m := got["tail-00002-of-00002.gguf"]; m.Err == nil || !strings.Contains(m.Err.Error(), "without its first part") {
		t.Errorf("tail: %v; want a missing first part", m.Err)
	}
}

func TestUnreadableListedWithError(t *testing.T) {
	e := env(t, nil)
	d := e.Dir
	os.WriteFile(filepath.Join(d, "text.gguf"), []byte("# not a model"), 0o644)
	os.WriteFile(filepath.Join(d, "empty.gguf"), nil, 0o644)
	// A header that claims 2⁶⁰ metadata pairs.
	os.WriteFile(filepath.Join(d, "hostile.gguf"), []byte("GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10"), 0o644)
	os.Mkdir(filepath.Join(d, "folder.gguf"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(d, "pipe.gguf"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(d, "nowhere"), filepath.Join(d, "dangling.gguf"))
	os.Symlink("loop.gguf", filepath.Join(d, "loop.gguf"))
	writeModel(t, filepath.Join(d, "gemma.gguf"), map[string]any{"general.architecture": "gemma3"})
	got := byName(t, Find(context.Background(), e))
	for name, msg := range map[string]string{
		"text.gguf":     `not a GGUF file (magic "# no")`,
		"empty.gguf":    "not a GGUF file (0 bytes long)",
		"hostile.gguf":  "bad GGUF header: metadata key/value count",
		"pipe.gguf":     "not a regular file",
		"dangling.gguf": "no such file",
		"loop.gguf":     "too many levels of symbolic links",
		"gemma.gguf":    "architecture gemma3 is not supported",
	} {
		m, ok := got[name]
		if !ok || m.Err == nil || !strings.Contains(m.Err.Error(), msg) {
			t.Errorf("%s: %+v; want listed with an error saying %q", name, m, msg)
		}
	}
	if m, ok := got["gemma.gguf"]; ok && (m.Arch != "gemma3" || m.Type != "Q4_K - Medium") {
		t.Errorf("gemma.gguf %+v: an unsupported model still shows its type and architecture", m)
	}
	if _, ok := got["folder.gguf"]; ok {
		t.Errorf("a folder named .gguf was listed as a model")
	}
}

func TestPlacesAndOrder(t *testing.T) {
	e := env(t, nil)
	writeModel(t, filepath.Join(e.Home, ".lmstudio", "models", "p", "r", "a.gguf"), nil)
	writeModel(t, filepath.Join(e.Dir, "z.gguf"), nil)
	writeModel(t, filepath.Join(e.Dir, "B.gguf"), nil)
	f := Find(context.Background(), e)
	var names []string
	for _, m := range f.Models {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "B.gguf z.gguf p/r/a.gguf" {
		t.Errorf("order %q; want the current folder first (by name), then LM Studio", names)
	}
	seen := map[Source]bool{}
	for _, p := range f.Places {
		seen[p.Source] = true
		if p.Path == filepath.Join(e.Home, ".ollama", "models") && !errors.Is(p.Err, fs.ErrNotExist) {
			t.Errorf("absent ollama store: %v; want ErrNotExist", p.Err)
		}
		if p.Path == e.Dir && p.Err != nil {
			t.Errorf("current folder: %v", p.Err)
		}
	}
	for _, s := range sourceOrder[:1] {
		if !seen[s] {
			t.Errorf("%s not among the places searched: %+v", s, f.Places)
		}
	}
	for _, s := range []Source{SourceLlamaCpp, SourceHuggingFace, SourceOllama, SourceLMStudio} {
		if !seen[s] {
			t.Errorf("%s not among the places searched: %+v", s, f.Places)
		}
	}
}

func TestCanceled(t *testing.T) {
	e := env(t, nil)
	writeModel(t, filepath.Join(e.Dir, "a.gguf"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f := Find(ctx, e); len(f.Models) != 0 {
		t.Errorf("a cancelled search described %d models", len(f.Models))
	}
}

func TestNoHomeNoEnv(t *testing.T) {
	f := Find(context.Background(), Env{})
	if len(f.Models) != 0 || len(f.Places) != 0 {
		t.Errorf("an empty Env searched %+v", f)
	}
}
