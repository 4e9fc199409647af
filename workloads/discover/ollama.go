package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// OllamaModelLayer is the media type of the layer of an ollama manifest that holds
// the GGUF file.
const OllamaModelLayer = "application/vnd.ollama.image.model"

// ollamaRegistry and ollamaLibrary are the host and namespace ollama leaves out of a
// model's short name (registry.ollama.ai/library/llama3:8b is llama3:8b).
const (
	ollamaRegistry = "registry.ollama.ai"
	ollamaLibrary  = "library"
)

// maxManifest bounds the bytes of a manifest read (real ones are under 2 KiB).
const maxManifest = 1 << 20

// sha256Digest is the only digest form ollama writes; anything else in a manifest is
// refused, so a hostile digest cannot name a file outside the blobs folder.
var sha256Digest = regexp.MustCompile(`^sha256[:-]([0-9a-f]{64})$`)

// ollamaManifest is the part of an ollama manifest discovery reads.
type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	} `json:"layers"`
}

// searchOllama lists ollama's models: each manifest (manifests/HOST/NAMESPACE/MODEL/TAG)
// names its model layer's blob (blobs/sha256-HEX), shown as model:tag.
func (p place) searchOllama(w *walker) ([]candidate, error) {
	root := filepath.Join(p.dir, "manifests")
	var files []string
	err := w.walk(root, 4, func(path string, level int) {
		if level == 4 {
			files = append(files, path)
		}
	})
	var out []candidate
	for _, f := range files {
		name := ollamaName(rel(root, f))
		blob, berr := ollamaBlob(p.dir, f)
		c := candidate{name: name, path: blob, source: p.source, place: p.dir, err: berr}
		if berr != nil {
			c.path = f // what a user can look at
		}
		out = append(out, c)
	}
	return out, err
}

// ollamaName turns a manifest's path below manifests/ into ollama's short name:
// registry.ollama.ai/library/llama3/8b → llama3:8b, registry.ollama.ai/me/m/q4 →
// me/m:q4, host/ns/m/t → host/ns/m:t.
func ollamaName(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) != 4 {
		return path
	}
	host, ns, model, tag := parts[0], parts[1], parts[2], parts[3]
	switch {
	case host == ollamaRegistry && ns == ollamaLibrary:
		return model + ":" + tag
	case host == ollamaRegistry:
		return ns + "/" + model + ":" + tag
	}
	return host + "/" + ns + "/" + model + ":" + tag
}

// ollamaBlob reads the manifest at path and returns the blob of its model layer.
func ollamaBlob(dir, path string) (string, error) {
	fd, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("ollama manifest %s: %w", path, unwrapPath(err))
	}
	defer fd.Close()
	var m ollamaManifest
	if err := json.NewDecoder(io.LimitReader(fd, maxManifest)).Decode(&m); err != nil {
		return "", fmt.Errorf("ollama manifest %s: %w", path, err)
	}
	for _, l := range m.Layers {
		if l.MediaType != OllamaModelLayer {
			continue
		}
		d := sha256Digest.FindStringSubmatch(l.Digest)
		if d == nil {
			return "", fmt.Errorf("ollama manifest %s: model layer digest %q is not sha256:HEX", path, l.Digest)
		}
		blob := filepath.Join(dir, "blobs", "sha256-"+d[1])
		if _, err := os.Stat(blob); err != nil {
			return "", fmt.Errorf("ollama manifest %s: model blob %s: %w", path, filepath.Base(blob), unwrapPath(err))
		}
		return blob, nil
	}
	return "", errors.New("ollama manifest " + path + ": no model layer (" + OllamaModelLayer + ")")
}
