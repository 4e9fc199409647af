package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// throughput runs a JetStream-style throughput job: per row, the model in the row's
// weights type (quantized from one BF16 source), an in-process engine with the row's
// KV cache type, BatchSize sequences at once and, when the cache is shorter than
// input + output, a rolling window of MaxCacheLength; every prompt sent at once as a
// serving point; then the rows in JetStream's table.
func (x *execution) throughput(ctx context.Context) (result.Document, error) {
	t := *x.job.Throughput
	tp := &result.Throughput{Spec: t}
	doc := result.Document{Throughput: tp}
	rows := t.Rows()
	for i, r := range rows {
		path, id, err := x.throughputModel(ctx, t.Model, r.Weights)
		if err != nil {
			return doc, err
		}
		sp := throughputServe(t, path, r)
		be, err := x.backend(ctx, &sp)
		if err != nil {
			return doc, err
		}
		be.modelID = id
		row, res, err := x.throughputRow(ctx, t, r, sp, be, i, len(rows) > 1)
		be.eng.Close()
		if res != nil {
			doc.Serving = append(doc.Serving, res)
			doc.Partial = doc.Partial || res.Partial
		}
		if row != nil {
			tp.Rows = append(tp.Rows, *row)
		}
		if err != nil {
			return doc, err
		}
	}
	var b strings.Builder
	if err := report.JetStreamTable(&b, tp); err != nil {
		return doc, err
	}
	for line := range strings.Lines(b.String()) {
		x.say(strings.TrimSuffix(line, "\n"))
	}
	return doc, nil
}

// checkThroughput says in one line why a throughput job cannot run (nil: it can),
// before anything is written or loaded: the spec, the model, the dataset file, the
// threads.
func checkThroughput(t workloads.ThroughputSpec) error {
	if err := t.Validate(); err != nil {
		return err
	}
	ref, err := ModelRef(t.Model, "BF16")
	if err != nil {
		return err
	}
	if err := CheckModel(ref); err != nil {
		return err
	}
	if fi, err := os.Stat(t.DatasetPath); err != nil || fi.IsDir() {
		return fmt.Errorf("--dataset-path %s: not a readable file", t.DatasetPath)
	}
	if err := (engine.Options{Threads: t.Threads}).Validate(); err != nil {
		return fmt.Errorf("-t: %w", err)
	}
	return nil
}

// throughputRow runs one row as a serving point (key) and reads its row of the table.
func (x *execution) throughputRow(ctx context.Context, t workloads.ThroughputSpec, r workloads.ThroughputRow, sp workloads.ServeSpec, be *backend, key int, sweep bool) (*result.ThroughputRow, *serving.Result, error) {
	ds, err := x.dataset(sp.Dataset, be)
	if err != nil {
		return nil, nil, err
	}
	e := be.eng
	kv := e.KVCache()
	var weights int64
	for _, ti := range e.File.Tensors {
		weights += int64(ti.Size)
	}
	wt := r.Weights
	if wt == "" {
		ft, _ := e.File.Uint("general.file_type")
		wt = synth.FileTypeName(uint32(ft))
	}
	switch {
	case kv.Window > 0 && kv.Window == t.MaxCacheLength && t.RollingWindow():
		x.logf("%s", t.RollingWindowNote())
	case kv.Window > 0: // the model's own sliding window
		x.logf("rolling window: the model's sliding window, each sequence keeps its last %d positions", kv.Window)
	}
	res, err := x.point(ctx, sp, be, ds, 0, key, sweep)
	if res == nil {
		return nil, nil, err
	}
	st := e.SchedulerStats()
	row := &result.ThroughputRow{
		Date: time.Now().Format(time.DateOnly), Device: x.envValue("cpu"), Dtype: r.Dtype(wt), Model: be.modelID,
		Weights: wt, KV: r.KV, BatchSize: t.BatchSize, CacheLength: t.MaxCacheLength,
		MaxInput: t.MaxInputLength, MaxOutput: t.MaxOutputLength,
		Throughput: res.Summary.OutputThroughput, Completed: res.Summary.Completed, Requests: res.Requests,
		RollingWindow: kv.Window, Rolled: st.Rolled, WeightBytes: weights, KVBytes: kv.Bytes(),
	}
	return row, res, err
}

// envValue is the value of the run's environment under key ("" when absent).
func (x *execution) envValue(key string) string {
	return result.Document{Env: x.env}.EnvValue(key)
}

// throughputServe is the serving point of one throughput row: sharegpt prompts cut to
// the input limit, MaxOutputLength tokens each (end-of-sequence ignored), all sent at
// once to an engine running BatchSize sequences whose caches hold MaxCacheLength
// positions: the sequences whole when that is enough, else a rolling window.
func throughputServe(t workloads.ThroughputSpec, model string, r workloads.ThroughputRow) workloads.ServeSpec {
	sp := workloads.DefaultServe()
	sp.Model, sp.Threads, sp.IgnoreEOS = model, t.Threads, true
	sp.Dataset = workloads.DatasetSpec{Name: "sharegpt", Path: t.DatasetPath, NumPrompts: t.NumPrompts, Seed: t.Seed,
		ShareGPTOutputLen: t.MaxOutputLength, ShareGPTMaxInputLen: t.MaxInputLength}
	sp.Engine = workloads.EngineSpec{MaxNumSeqs: t.BatchSize, KVCacheType: r.KV, SeqContext: t.MaxCacheLength}
	if t.RollingWindow() {
		// + 1: a prompt that was not cut starts with BOS.
		sp.Engine.SeqContext, sp.Engine.RollingWindow = t.MaxInputLength+t.MaxOutputLength+1, t.MaxCacheLength
	}
	return sp
}

// throughputModel returns the file (or the built-in model's reference) a row runs and
// its id: a synthetic shape is written once in BF16 and each other weights type is
// quantized from that file (so every row has the same weights); a GGUF file is used as
// it is, or quantized from when a weights type is given. Quantized files are cached
// under the synthetic-model cache's "quantized" folder and made again when their
// source is newer.
func (x *execution) throughputModel(ctx context.Context, model, weights string) (path, id string, err error) {
	ref, err := ModelRef(model, "BF16")
	if err != nil {
		return "", "", err
	}
	switch {
	case ref.Path == workloads.BuiltinModel:
		return workloads.BuiltinModel, builtin.Name, nil
	case ref.Shape != "":
		id = ModelID(ref)
		var write func(done, total int64)
		if p, err := (synth.Cache{Dir: x.o.CacheDir}).Plan(ref.Shape, ref.Type, synth.DefaultSeed); err == nil && !p.Cached {
			x.logf("synthetic model %s", p)
			write = x.writing(id)
		}
		if path, err = ModelFile(ctx, ref, x.o.CacheDir, write); err != nil {
			return "", "", err
		}
		if weights == "" || weights == "BF16" {
			return path, id, nil
		}
	default:
		path, id = ref.Path, ref.Path
		if weights == "" {
			return path, id, nil
		}
	}
	dir := x.o.CacheDir
	if dir == "" {
		if dir, err = synth.DefaultCacheDir(); err != nil {
			return "", "", err
		}
	}
	dir = filepath.Join(dir, "quantized")
	out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".gguf")+"."+weights+".gguf")
	qid := id + " quantized to " + weights
	if src, err := os.Stat(path); err == nil {
		if q, err := os.Stat(out); err == nil && !q.ModTime().Before(src.ModTime()) {
			x.logf("%s: %s", qid, out)
			return out, qid, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("quantize: %w", err)
	}
	x.logf("quantizing %s to %s: %s", path, weights, out)
	if err := synth.QuantizeFile(ctx, path, out, weights, x.writing(qid)); err != nil {
		return "", "", err
	}
	return out, qid, nil
}
