package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
	"llmbench/workloads/store"
)

// PointStarted is published (an Output) before a serving point's requests go out.
type PointStarted struct{ Spec workloads.ServeSpec }

// PointDone is published (an Output) when a serving point has ended, with its result.
type PointDone struct{ Result *serving.Result }

// backend is what a serving job sends its requests to.
type backend struct {
	client         serving.Client
	tok            serving.Tokenizer
	modelID, tokID string
	modelCtx       int // the longest prompt + output a request may have (0: unknown)
	notes          []string
	eng            *engine.Engine // the in-process engine (nil for HTTP)
}

// serve runs a serving job: the backend, tokenizer and dataset, the ready check,
// then every point of the sweep at each power limit.
func (x *execution) serve(ctx context.Context) (result.Document, error) {
	sp := *x.job.Serve
	d := &sp.Dataset
	x.rep.Progress(0, 0, "requests", "preparing "+x.job.ModelNames()) // no total yet: a label, no bar
	be, err := x.backend(ctx, &sp)
	if err != nil {
		return result.Document{}, err
	}
	if be.eng != nil {
		defer be.eng.Close()
	}
	ds, err := x.dataset(*d, be)
	if err != nil {
		return result.Document{}, err
	}
	if err := x.ready(ctx, &sp, be, ds); err != nil {
		return result.Document{}, err
	}
	job := x.job
	job.Serve = &sp
	points := job.Points()
	var results []*serving.Result
	err = x.o.Device.sweep(ctx, job.PowerLimitW, x.o.Settle, x.logf, func(ctx context.Context, watts float64) error {
		for _, p := range points {
			res, err := x.point(ctx, p, be, ds, watts, len(results), len(points) > 1)
			if res == nil {
				return err
			}
			results = append(results, res)
			if err != nil {
				return err
			}
		}
		return nil
	})
	doc := result.Document{Serving: results}
	for _, r := range results {
		doc.Partial = doc.Partial || r.Partial
	}
	return doc, err
}

// dataset reads d's file and loads its prompts for be: the note goes to the log, an
// oversampling note to be's notes.
func (x *execution) dataset(d workloads.DatasetSpec, be *backend) (*serving.Dataset, error) {
	var data []byte
	if d.Path != "" {
		var err error
		if data, err = os.ReadFile(d.Path); err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
	}
	ds, err := serving.LoadDataset(d, data, be.tok, be.modelCtx)
	if err != nil {
		return nil, err
	}
	x.logf("%s (%d prompts, %d skipped)", ds.Note, len(ds.Requests), ds.Skipped)
	if ds.Oversampled > 0 {
		be.notes = append(be.notes, fmt.Sprintf("%s: %d of the %d requests repeat a prompt drawn at random because fewer passed the filters (as vLLM oversamples; --no-oversample to keep only those)",
			d.Name, ds.Oversampled, len(ds.Requests)))
	}
	return ds, nil
}

// backend builds the client of sp's backend: the in-process engine, or an HTTP
// client (model from /v1/models when none is given, the tokenizer that counts).
func (x *execution) backend(ctx context.Context, sp *workloads.ServeSpec) (*backend, error) {
	be := &backend{}
	sampling := serving.Sampling{Temperature: sp.Temperature, TopP: sp.TopP, TopK: sp.TopK, MinP: sp.MinP, FrequencyPenalty: sp.FrequencyPenalty,
		PresencePenalty: sp.PresencePenalty, RepetitionPenalty: sp.RepetitionPenalty, Logprobs: sp.Logprobs}
	if sp.Backend == "inproc" {
		opts, err := EngineOptions(sp.Engine)
		if err != nil {
			return nil, err
		}
		opts.Threads = sp.Threads
		ref, err := ModelRef(sp.Model, sp.SyntheticType)
		if err != nil {
			return nil, err
		}
		be.modelID = ModelID(ref)
		draft, err := SetDraft(ctx, sp.Engine, sp.SyntheticType, &opts, x.o.CacheDir, x.writing("draft "+sp.Engine.Draft))
		if err != nil {
			return nil, err
		}
		x.logf("loading %s", be.modelID)
		e, _, err := x.openModel(ctx, ref, opts)
		if err != nil {
			return nil, err
		}
		if info, ok := e.DraftInfo(); ok {
			x.logf("%s", info)
			be.notes = append(be.notes, fmt.Sprintf("inproc: speculative decoding with draft %s (up to %d tokens a step, at least %d, p-min %g): a step's accepted tokens reach the client in one chunk, so ITL is between steps",
				draft, info.Max, info.Min, info.PMin))
		}
		be.eng, be.tokID = e, be.modelID
		be.tok, be.modelCtx = e.Tok, e.Options().SeqContext
		be.client = &serving.InProc{Gen: e, Sampling: sampling, IgnoreEOS: sp.IgnoreEOS,
			Timeout: sp.RequestTimeout(), KeepText: x.keepText(), NonStreaming: sp.NonStreaming}
		eo := e.Options()
		x.logf("%s", e.KVCache())
		x.logf("%s", e.Partitions())
		counts := "TTFT"
		if sp.NonStreaming {
			counts = "E2EL (--non-streaming)"
		}
		be.notes = append(be.notes, fmt.Sprintf("inproc: continuous batching of up to %d requests and %d tokens a step; requests beyond them wait inside the engine and that wait counts in %s",
			eo.MaxNumSeqs, eo.MaxNumBatchedTokens, counts))
		return be, nil
	}
	hdr := map[string]string{}
	for k, v := range x.o.Serve.Headers {
		hdr[k] = v
	}
	if key := os.Getenv("OPENAI_API_KEY"); key != "" {
		if _, ok := hdr["Authorization"]; !ok {
			hdr["Authorization"] = "Bearer " + key
		}
	}
	if sp.Endpoint == "" {
		sp.Endpoint = serving.Endpoint(sp.Backend, sp.NonStreaming)
	}
	maxConc := 0
	for _, p := range x.job.Points() {
		maxConc = max(maxConc, p.MaxConcurrency)
	}
	if maxConc == 0 {
		maxConc = min(sp.Dataset.NumPrompts, 4096)
	}
	tr := serving.NewTransport(maxConc)
	if sp.Insecure {
		serving.InsecureTLS(tr)
	}
	hc := &http.Client{Transport: tr}
	var extra map[string]json.RawMessage
	if sp.ExtraBody != "" {
		if err := json.Unmarshal([]byte(sp.ExtraBody), &extra); err != nil {
			return nil, fmt.Errorf("--extra-body: %w", err)
		}
	}
	var err error
	if sp.Model == "" && (sp.Backend == "openai" || sp.Backend == "openai-chat") {
		if sp.Model, err = FirstModel(ctx, hc, sp.BaseURL, hdr); err != nil {
			return nil, fmt.Errorf("%w; is the server up at %s? (llmbench serve starts one; --backend inproc runs the engine in this process)", err, sp.BaseURL)
		}
		x.logf("model %s (the server's first in /v1/models)", sp.Model)
	}
	be.modelID = sp.Model
	if be.modelID == "" {
		be.modelID = sp.Backend
	}
	tokPath := sp.Tokenizer
	if tokPath == "" && strings.HasSuffix(sp.Model, ".gguf") {
		tokPath = sp.Model
	}
	if be.tok, be.tokID, err = Tokenizer(tokPath); err != nil {
		return nil, err
	}
	if tokPath == "" {
		x.logf("warning: counting tokens with the built-in %s tokenizer; give --tokenizer FILE.gguf for the served model's", builtin.Name)
	}
	name := sp.ServedModelName
	if name == "" {
		name = sp.Model
	}
	be.client = &serving.HTTP{Backend: sp.Backend, URL: sp.BaseURL + sp.Endpoint, Model: name, Headers: hdr, IgnoreEOS: sp.IgnoreEOS,
		Sampling: sampling, Tok: be.tok, HC: hc, Timeout: sp.RequestTimeout(), KeepText: x.keepText(),
		ExtraBody: extra, RequestIDPrefix: sp.RequestIDPrefix, NonStreaming: sp.NonStreaming}
	return be, nil
}

// ready waits for an HTTP server to answer a first request, as vLLM does.
func (x *execution) ready(ctx context.Context, sp *workloads.ServeSpec, be *backend, ds *serving.Dataset) error {
	if sp.Backend == "inproc" {
		return nil
	}
	if x.o.Serve.NoReadyCheck {
		x.say("Skipping endpoint ready check.")
		return nil
	}
	timeout := x.o.Serve.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	x.say("Starting initial single prompt test run...")
	if _, err := serving.WaitReady(ctx, be.client, &ds.Requests[0], timeout, 5*time.Second); err != nil {
		if ctx.Err() != nil {
			return context.Canceled
		}
		return fmt.Errorf("initial test run against %s%s failed: %w; start the server (llmbench serve runs one) or use --backend inproc", sp.BaseURL, sp.Endpoint, err)
	}
	x.say("Initial test run completed.")
	return nil
}

// point runs one serving point (index key of the run) and saves its JSON when asked.
// A point that stopped early returns its partial result with context.Canceled.
func (x *execution) point(ctx context.Context, p workloads.ServeSpec, be *backend, ds *serving.Dataset, watts float64, key int, sweep bool) (*serving.Result, error) {
	b := &serving.Bench{Spec: p, Dataset: ds, Client: be.client, ModelID: be.modelID, TokenizerID: be.tokID, Notes: be.notes, PowerLimitW: watts}
	if be.eng != nil {
		eng := be.eng
		eng.ResetPrefixCache() // each point starts cold; its warm-ups (in b.Run) run after this
		b.Engine = func() serving.EngineStats { eng.Settle(); return engineStats(eng) }
	}
	b.Warm, _ = be.client.(serving.ConnWarmer)
	if w := x.keep(); w != nil {
		w.Point(key, &serving.Result{Spec: p, ModelID: be.modelID, TokenizerID: be.tokID, Notes: be.notes, PowerLimitW: watts, Skipped: ds.Skipped, Requests: len(ds.Requests)})
		b.Client = recordingClient{Client: be.client, w: w, key: key}
	}
	x.rep.Output(PointStarted{Spec: p})
	out, err := b.Run(ctx, x.rep)
	res, _ := out.(*serving.Result)
	if res == nil {
		if err == nil {
			err = errors.New("serve-bench: no result")
		}
		return nil, err
	}
	if ctx.Err() != nil {
		res.Partial, err = true, context.Canceled
	}
	date := time.Now() // one date names the JSON and the timeline beside it
	if s := x.o.Serve.SaveJSON; s != nil {
		if serr := x.saveJSON(s, res, p, watts, sweep, date); serr != nil && err == nil {
			err = serr
		}
	}
	if p.PlotTimeline {
		if terr := x.saveTimeline(res, p, watts, sweep, date); terr != nil && err == nil {
			err = terr
		}
	}
	x.rep.Output(PointDone{Result: res})
	return res, err
}

// saveJSON writes a point's vLLM-style result JSON (--save-result).
func (x *execution) saveJSON(s *SaveJSON, res *serving.Result, p workloads.ServeSpec, watts float64, sweep bool, date time.Time) error {
	name, err := resultName(s, res, p, watts, sweep, date)
	if err != nil {
		return err
	}
	opt := report.VLLMJSONOptions{Detailed: s.Detailed, Metadata: p.Metadata, Date: date, Version: x.o.Build}
	if err := writeVLLMJSON(name, s.Append, res, opt); err != nil {
		return err
	}
	x.logf("saved %s", name)
	return nil
}

// saveTimeline writes a point's --plot-timeline HTML beside its result JSON (named as
// the JSON, ending _timeline.html; in the current folder without --save-result).
func (x *execution) saveTimeline(res *serving.Result, p workloads.ServeSpec, watts float64, sweep bool, date time.Time) error {
	s := x.o.Serve.SaveJSON
	if s == nil {
		s = &SaveJSON{}
	}
	name, err := resultName(s, res, p, watts, sweep, date)
	if err != nil {
		return err
	}
	name = strings.TrimSuffix(name, filepath.Ext(name)) + "_timeline.html"
	th := report.DefaultTimelineITLThresholdsMs
	if t := p.TimelineITLThresholdsMs; len(t) == 2 {
		th = [2]float64{t[0], t[1]}
	}
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("--plot-timeline: %w", err)
	}
	if err := report.VLLMTimelineHTML(f, res, th); err != nil {
		f.Close()
		return fmt.Errorf("--plot-timeline: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--plot-timeline: %w", err)
	}
	x.logf("timeline plot saved to %s", name)
	return nil
}

// resultName is the path of a point's result JSON: --result-filename (with the
// point's concurrency and rate in a sweep) or vLLM's default name, the power limit
// appended when one was set, under --result-dir (created).
func resultName(s *SaveJSON, res *serving.Result, p workloads.ServeSpec, watts float64, sweep bool, date time.Time) (string, error) {
	name := s.File
	if name == "" {
		name = report.VLLMResultFilename(res, date)
	} else if sweep {
		ext := filepath.Ext(name)
		name = fmt.Sprintf("%s-c%d-r%s%s", strings.TrimSuffix(name, ext), p.MaxConcurrency, p.RequestRate.String(), ext)
	}
	if watts > 0 {
		ext := filepath.Ext(name)
		name = fmt.Sprintf("%s-p%.0fw%s", strings.TrimSuffix(name, ext), watts, ext)
	}
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return "", err
		}
		name = filepath.Join(s.Dir, name)
	}
	return name, nil
}

// writeVLLMJSON writes the result JSON to name; appending (--append-result) puts it
// on a new line of an existing file, as vLLM does.
func writeVLLMJSON(name string, appendResult bool, res *serving.Result, opt report.VLLMJSONOptions) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendResult {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if err != nil {
		return fmt.Errorf("save result: %w", err)
	}
	if st, err := f.Stat(); err == nil && appendResult && st.Size() > 0 {
		if _, err := f.WriteString("\n"); err != nil {
			f.Close()
			return fmt.Errorf("save result: %w", err)
		}
	}
	if err := report.VLLMJSON(f, res, opt); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// engineStats reads the in-process engine's KV cache and scheduler counters.
func engineStats(e *engine.Engine) serving.EngineStats {
	kv, st := e.KVCache(), e.SchedulerStats()
	s := serving.EngineStats{
		KVCacheType: strings.ToLower(kv.Type.String()), KVBlockSize: kv.BlockSize, KVBlocks: kv.Blocks,
		KVBytes: kv.Bytes(), KVSavedVsF16: kv.SavedVs(kernels.F16), KVSavedVsF32: kv.SavedVs(kernels.F32),
		PrefixCache: kv.PrefixCache, PrefixQueries: st.PrefixQueryTokens, PrefixHits: st.PrefixHitTokens,
		Preemptions: st.Preemptions, Steps: st.DecodeSteps, WeightBytes: e.WeightBytes(),
		DraftedTokens: st.DraftedTokens, AcceptedTokens: st.AcceptedTokens, SeqSteps: st.SeqSteps, SeqTokens: st.SeqTokens,
	}
	if d, ok := e.DraftInfo(); ok {
		s.DraftWeightBytes, s.DraftKVBytes = d.WeightBytes, d.KVBytes
	}
	return s
}

// recordingClient hands every finished request of point key to the results store
// (queued: the store's writer goroutine does the disk work).
type recordingClient struct {
	serving.Client
	w   *store.Writer
	key int
}

// Do implements serving.Client.
func (c recordingClient) Do(ctx context.Context, req *serving.Request, rec *metrics.Record, now func() time.Duration) {
	c.Client.Do(ctx, req, rec, now)
	if !rec.Interrupted() {
		c.w.Request(c.key, *rec)
	}
}

// keepText says whether records keep the generated text (only --save-detailed
// writes it; otherwise it is dropped once counted).
func (x *execution) keepText() bool { return x.o.Serve.SaveJSON != nil && x.o.Serve.SaveJSON.Detailed }
