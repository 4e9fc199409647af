package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/discover"
	"llmbench/workloads/micro"
	"llmbench/workloads/serving"
)

// ModelRef turns what a user typed for a model into a reference: "" or
// "builtin:stories260K" is the built-in model, an existing file is that GGUF file, a
// synthetic shape name (llama-1b, …) is that shape in typ, and "synth:SHAPE:TYPE"
// (ModelID's form) that shape in that type. Anything else is an error that lists the
// shapes.
func ModelRef(s, typ string) (workloads.BenchModel, error) {
	if rest, ok := strings.CutPrefix(s, "synth:"); ok && !fileExists(s) {
		shape, t, found := strings.Cut(rest, ":")
		if !found {
			return workloads.BenchModel{}, fmt.Errorf("model %q: want synth:SHAPE:TYPE (synth:llama-1b:Q4_0)", s)
		}
		s, typ = shape, t
	}
	switch {
	case s == "" || s == workloads.BuiltinModel || s == builtin.Name:
		return workloads.BenchModel{Path: workloads.BuiltinModel}, nil
	case fileExists(s):
		return workloads.BenchModel{Path: s}, nil
	}
	if _, err := synth.Lookup(s); err != nil {
		return workloads.BenchModel{}, fmt.Errorf("model %q: not a file and not a synthetic shape (%s)", s, strings.Join(synth.Shapes(), ", "))
	}
	if _, err := synth.ParseFileType(typ); err != nil {
		return workloads.BenchModel{}, fmt.Errorf("model %s: %w", s, err)
	}
	return workloads.BenchModel{Shape: s, Type: typ}, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// CheckModel says in one line why m cannot be opened (nil: it can), without loading
// the weights: a file is a GGUF model the engine can build (discover.CheckModelFile:
// "README.md: not a GGUF file (magic "# ll")"), a synthetic model's shape and type
// are known.
func CheckModel(m workloads.BenchModel) error {
	switch {
	case m.Path == workloads.BuiltinModel:
		return nil
	case m.Shape != "":
		if _, err := synth.Lookup(m.Shape); err != nil {
			return err
		}
		_, err := synth.ParseFileType(m.Type)
		return err
	case m.Path == "":
		return fmt.Errorf("model: give a file, %s or a shape and type", workloads.BuiltinModel)
	}
	return discover.CheckModelFile(m.Path)
}

// ModelID is the one name every result gives a model: the built-in model's name, a
// file's path, or "synth:SHAPE:TYPE".
func ModelID(m workloads.BenchModel) string {
	if m.Path == workloads.BuiltinModel {
		return builtin.Name
	}
	return m.String()
}

// OpenModel loads the model m references with opts: the built-in model, a GGUF file,
// or a synthetic shape written once into cacheDir ("" = the user cache dir). progress,
// when not nil, follows the long steps in bytes: the writing of a synthetic model
// (WriteStep) and the weights' preparation for the backend (engine.PrepareStep). It
// returns the engine and the model's file
// (the built-in model's name for the built-in one), as llama-bench's model_filename.
func OpenModel(ctx context.Context, m workloads.BenchModel, opts engine.Options, cacheDir string, progress func(step string, done, total int64)) (*engine.Engine, string, error) {
	if progress != nil && opts.Progress == nil {
		opts.Progress = &stepProgress{progress}
	}
	switch {
	case m.Path == workloads.BuiltinModel:
		e, err := engine.LoadBytes(ctx, builtin.Name, builtin.Stories260K, opts)
		return e, builtin.Name, err
	}
	var write func(done, total int64)
	if progress != nil {
		write = func(done, total int64) { progress(WriteStep, done, total) }
	}
	path, err := ModelFile(ctx, m, cacheDir, write)
	if err != nil {
		return nil, "", err
	}
	e, err := engine.Load(ctx, path, opts)
	return e, path, err
}

// WriteStep names OpenModel's step that writes a synthetic model.
const WriteStep = "writing synthetic model"

// stepProgress is an engine.Progress calling a function (a pointer, so that the
// engine's Options stay comparable).
type stepProgress struct {
	f func(step string, done, total int64)
}

func (p *stepProgress) Progress(step string, done, total int64) { p.f(step, done, total) }

// ModelFile is the GGUF file of a model that is not the built-in one: the file
// itself, or a synthetic model written once into cacheDir ("" = the user cache dir).
func ModelFile(ctx context.Context, m workloads.BenchModel, cacheDir string, progress func(done, total int64)) (string, error) {
	switch {
	case m.Path == workloads.BuiltinModel:
		return "", errors.New("model: the built-in model has no file")
	case m.Shape != "":
		return synth.Ensure(ctx, cacheDir, m.Shape, m.Type, synth.DefaultSeed, progress)
	}
	return m.Path, nil
}

// Tokenizer reads the tokenizer of a GGUF file (the built-in model's when path is
// empty) without loading the weights; id names it in results.
func Tokenizer(path string) (tok serving.Tokenizer, id string, err error) {
	var f *gguf.File
	id = path
	if path == "" {
		f, err = gguf.Parse(builtin.Stories260K)
		id = builtin.Name
	} else {
		f, err = gguf.Open(path)
	}
	if err != nil {
		return nil, "", fmt.Errorf("tokenizer: %w", err)
	}
	t, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, "", fmt.Errorf("tokenizer %s: %w", id, err)
	}
	return t, id, nil
}

// FirstModel asks an OpenAI-compatible server for its first model, as vLLM does when
// no model is given.
func FirstModel(ctx context.Context, hc *http.Client, base string, hdr map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return "", err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("no model given and %s/v1/models failed: %w", base, err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || len(body.Data) == 0 {
		return "", fmt.Errorf("no model given and %s/v1/models lists no model (HTTP %d)", base, resp.StatusCode)
	}
	return body.Data[0].ID, nil
}

// EngineOptions turns an engine spec into engine.Options, with one clear error for a
// bad value.
func EngineOptions(es workloads.EngineSpec) (engine.Options, error) {
	o := engine.Options{MaxNumSeqs: es.MaxNumSeqs, MaxNumBatchedTokens: es.MaxNumBatchedTokens, BlockSize: es.BlockSize,
		NoPrefixCache: es.NoPrefixCache, Context: es.Context, SeqContext: es.SeqContext, Window: es.RollingWindow,
		DraftMax: es.DraftMax, DraftMin: es.DraftMin, DraftPMin: es.DraftPMin}
	switch {
	case es.MaxNumSeqs < 0:
		return o, fmt.Errorf("--max-num-seqs must be positive")
	case es.MaxNumBatchedTokens < 0:
		return o, fmt.Errorf("--max-num-batched-tokens must be positive")
	case es.BlockSize < 0:
		return o, fmt.Errorf("--block-size must be positive")
	case es.Context < 0:
		return o, fmt.Errorf("context size %d must not be negative", es.Context)
	case es.DraftMax < 0 || es.DraftMin < 0:
		return o, fmt.Errorf("--draft-max and --draft-min must not be negative")
	case es.DraftMax > 0 && es.DraftMin > es.DraftMax:
		return o, fmt.Errorf("--draft-min %d is above --draft-max %d", es.DraftMin, es.DraftMax)
	case es.DraftPMin > 1 || es.DraftPMin != es.DraftPMin:
		return o, fmt.Errorf("--draft-p-min %g is not a probability", es.DraftPMin)
	case es.SeqContext < 0 || es.RollingWindow < 0:
		return o, fmt.Errorf("sequence context %d and rolling window %d must not be negative", es.SeqContext, es.RollingWindow)
	}
	var err error
	if o.KVCacheMemory, o.KVCacheFraction, err = workloads.ParseKVCacheMemory(es.KVCacheMemory); err != nil {
		return o, fmt.Errorf("--kv-cache-memory %v", err)
	}
	if es.KVCacheType != "" {
		t, err := kernels.ParseDType(es.KVCacheType)
		if err != nil || (t != kernels.F16 && t != kernels.Q8_0 && t != kernels.F32) {
			return o, fmt.Errorf("--kv-cache-type %q: want f16, q8_0 or f32", es.KVCacheType)
		}
		o.KVType, o.KVTypeSet = t, true
	}
	return o, nil
}

// WeightBytesPerToken is the bytes of weights one generated token reads from memory
// (every matrix once), the numerator of a decode's bandwidth ceiling.
func WeightBytesPerToken(f *gguf.File) uint64 { return micro.WeightBytesPerToken(f) }
