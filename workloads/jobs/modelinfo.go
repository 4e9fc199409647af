package jobs

import (
	"fmt"
	"io"
	"os"
	"strings"

	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/workloads/report"
)

// ModelInfo writes what `llmbench model info` prints for a model reference: a GGUF
// file (split models from their first part), or a synthetic shape as synth:SHAPE:TYPE
// read from its metadata alone: the header goes to a temporary sparse file whose data
// is a hole (no weights generated, no disk used), so full-size shapes answer in
// milliseconds.
func ModelInfo(w io.Writer, ref string, tensors, kv bool) error {
	path := ref
	if id, ok := strings.CutPrefix(ref, "synth:"); ok && !fileExists(ref) {
		shape, typ, ok := strings.Cut(id, ":")
		if !ok {
			return fmt.Errorf("model info: want synth:SHAPE:TYPE (synth:qwen3moe-30b-a3b:Q4_K_M), not %s", ref)
		}
		spec, err := synth.NewSpec(shape, typ, 0)
		if err != nil {
			return err
		}
		tmp, err := os.CreateTemp("", "llmbench-info-*.gguf")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		if err := synth.WriteSparse(tmp, spec); err != nil {
			return err
		}
		path, ref = tmp.Name(), ref+" (metadata only: no weights written)"
	}
	f, err := gguf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if path != ref {
		os.Remove(path) // the mapping keeps it readable; nothing is left if printing is cut short
	}
	return report.ModelInfo(w, ref, f, tensors, kv)
}
