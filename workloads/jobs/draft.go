package jobs

import (
	"cmp"
	"context"
	"fmt"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/workloads"
)

// DraftRef is the model reference of es's speculative-decoding draft (ok false: es
// has none): a file, the built-in model or a synthetic shape in es.DraftType, else in
// typ (the model's synthetic type).
func DraftRef(es workloads.EngineSpec, typ string) (m workloads.BenchModel, ok bool, err error) {
	if es.Draft == "" {
		return m, false, nil
	}
	typ = cmp.Or(es.DraftType, typ)
	if _, err := synth.Lookup(es.Draft); err == nil && typ == "" && !fileExists(es.Draft) {
		return m, true, fmt.Errorf("draft %s is a synthetic shape: give its weight type (--draft-type Q8_0, …)", es.Draft)
	}
	if m, err = ModelRef(es.Draft, typ); err != nil {
		return m, true, fmt.Errorf("draft %w", err)
	}
	if err := CheckModel(m); err != nil {
		return m, true, fmt.Errorf("draft %s: %w", ModelID(m), err)
	}
	return m, true, nil
}

// SetDraft puts es's draft into opts: its file, which the engine opens (a synthetic
// draft written once into cacheDir first, progress following the writing), or the
// built-in model from memory. It returns the draft's id ("" when es has none).
func SetDraft(ctx context.Context, es workloads.EngineSpec, typ string, opts *engine.Options, cacheDir string, progress func(done, total int64)) (string, error) {
	m, ok, err := DraftRef(es, typ)
	if !ok || err != nil {
		return "", err
	}
	id := ModelID(m)
	if m.Path == workloads.BuiltinModel {
		d, err := engine.ParseDraft(builtin.Name, builtin.Stories260K)
		if err != nil {
			return id, err
		}
		opts.DraftModel = d // read from memory: nothing to close
		return id, nil
	}
	path, err := ModelFile(ctx, m, cacheDir, progress)
	if err != nil {
		return id, fmt.Errorf("draft %s: %w", id, err)
	}
	opts.Draft = path
	return id, nil
}
