package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/engine/tokenizer"
	"llmbench/kernels"
	"llmbench/profiles"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/power"
	"llmbench/workloads/report"
	benchrun "llmbench/workloads/run"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// serveBenchNargs are the flags that take several values, as vllm bench serve's
// argparse nargs do: "--goodput ttft:100 tpot:50" becomes two --goodput flags.
var serveBenchNargs = map[string]int{"--header": -1, "--metadata": -1, "--goodput": -1, "--compare": 2}

// expandNargs rewrites nargs-style arguments into repeated flags.
func expandNargs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		n, ok := serveBenchNargs[a]
		if !ok {
			out = append(out, a)
			continue
		}
		taken := 0
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && (n < 0 || taken < n) {
			out = append(out, a, args[i+1])
			i++
			taken++
		}
		if taken == 0 {
			out = append(out, a)
		}
	}
	return out
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// optFloat and optInt are flags that remember whether they were given.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o.v == nil {
		return ""
	}
	return fmt.Sprint(*o.v)
}
func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	o.v = &v
	return err
}

type optInt struct{ v *int }

func (o *optInt) String() string {
	if o.v == nil {
		return ""
	}
	return fmt.Sprint(*o.v)
}
func (o *optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	o.v = &v
	return err
}

func parseKV(items []string, sep string, what string) (map[string]string, error) {
	m := map[string]string{}
	for _, it := range items {
		for _, part := range strings.Fields(it) {
			k, v, ok := strings.Cut(part, sep)
			if !ok {
				return nil, fmt.Errorf("%s %q: want KEY%sVALUE", what, part, sep)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

func runServeBench(ctx context.Context, args []string) error {
	fs := newFlags("serve-bench", "[--backend inproc|openai|openai-chat|tgi|llamacpp] [--base-url URL] [-m MODEL] [--dataset-name NAME] [--num-prompts N] [--request-rate R[,R…]] [--max-concurrency N[,N…]] … | --compare A.json B.json")
	var sp workloads.ServeSpec
	def := profiles.DefaultServe() // the defaults profiles share
	dd := def.Dataset
	fs.StringVar(&sp.Backend, "backend", "openai", "inproc (our engine, no HTTP), openai (/v1/completions), openai-chat, tgi (/generate_stream) or llamacpp (/completion)")
	baseURL := fs.String("base-url", "", "server base URL (default http://HOST:PORT)")
	host := fs.String("host", "127.0.0.1", "server host when --base-url is not given")
	port := fs.Int("port", 8000, "server port when --base-url is not given")
	endpoint := fs.String("endpoint", "", "API endpoint (default per backend: /v1/completions, /v1/chat/completions, /generate_stream, /completion)")
	fs.StringVar(&sp.Model, "model", "", "model name for the server; with --backend inproc a GGUF file or a synthetic shape (llama-1b, …); default: the server's first model / the built-in stories260K")
	fs.StringVar(&sp.Model, "m", "", "shorthand for --model")
	fs.StringVar(&sp.ServedModelName, "served-model-name", "", "model name sent in requests (default --model)")
	fs.StringVar(&sp.Tokenizer, "tokenizer", "", "GGUF `file` whose tokenizer counts tokens (default: the model's, else the built-in one)")
	fs.StringVar(&sp.Label, "label", "", "label (prefix) of the result file name (default: the backend)")
	fs.StringVar(&sp.SyntheticType, "synthetic-type", def.SyntheticType, "weight type of a synthetic --model shape (inproc): "+strings.Join(synth.FileTypes(), ", "))
	fs.IntVar(&sp.Threads, "t", 0, "inproc: threads (0 = all cores)")
	ctxLen := fs.Int("c", 0, "inproc: context size (0 = the model's)")
	addEngineFlags(fs, &sp.Engine, "inproc: ")
	var headers, metadata, goodput, compare listFlag
	fs.Var(&headers, "header", "KEY=VALUE header sent with every request (repeatable; values never saved)")
	fs.Var(&metadata, "metadata", "KEY=VALUE saved in the result JSON (repeatable)")
	fs.Var(&goodput, "goodput", "SLO KEY:MS for goodput, KEY in ttft, tpot, e2el (repeatable)")
	fs.Var(&compare, "compare", "compare two saved results: --compare A.json B.json")

	d := &sp.Dataset
	fs.StringVar(&d.Name, "dataset-name", dd.Name, "sharegpt, sonnet, random, prefix_repetition or custom (JSONL)")
	fs.StringVar(&d.Path, "dataset-path", "", "dataset file (sharegpt JSON, sonnet text, custom JSONL)")
	fs.IntVar(&d.NumPrompts, "num-prompts", dd.NumPrompts, "number of prompts to send")
	fs.Int64Var(&d.Seed, "seed", 0, "random seed (dataset sampling and arrival times)")
	inputLen := fs.Int("input-len", 0, "general input length (maps to --random-input-len)")
	outputLen := fs.Int("output-len", 0, "general output length (maps to every dataset's output length)")
	fs.IntVar(&d.RandomInputLen, "random-input-len", dd.RandomInputLen, "random: input tokens")
	fs.IntVar(&d.RandomOutputLen, "random-output-len", dd.RandomOutputLen, "random: output tokens")
	fs.Float64Var(&d.RandomRangeRatio, "random-range-ratio", 0, "random: lengths uniform in [len·(1−r), len·(1+r)]")
	fs.IntVar(&d.RandomPrefixLen, "random-prefix-len", 0, "random: shared prefix tokens")
	fs.IntVar(&d.SonnetInputLen, "sonnet-input-len", dd.SonnetInputLen, "sonnet: input tokens")
	fs.IntVar(&d.SonnetOutputLen, "sonnet-output-len", dd.SonnetOutputLen, "sonnet: output tokens")
	fs.IntVar(&d.SonnetPrefixLen, "sonnet-prefix-len", dd.SonnetPrefixLen, "sonnet: shared prefix tokens")
	fs.BoolVar(&d.NoOversample, "no-oversample", false, "sharegpt/custom: when fewer prompts than --num-prompts pass the filters, run those instead of repeating some (vLLM's default oversamples)")
	fs.IntVar(&d.ShareGPTOutputLen, "sharegpt-output-len", 0, "sharegpt: fixed output tokens (also admits single-turn entries)")
	fs.IntVar(&d.PrefixRepetitionPrefixLen, "prefix-repetition-prefix-len", dd.PrefixRepetitionPrefixLen, "prefix_repetition: prefix tokens")
	fs.IntVar(&d.PrefixRepetitionSuffixLen, "prefix-repetition-suffix-len", dd.PrefixRepetitionSuffixLen, "prefix_repetition: suffix tokens")
	fs.IntVar(&d.PrefixRepetitionNumPrefixes, "prefix-repetition-num-prefixes", dd.PrefixRepetitionNumPrefixes, "prefix_repetition: distinct prefixes")
	fs.IntVar(&d.PrefixRepetitionOutputLen, "prefix-repetition-output-len", dd.PrefixRepetitionOutputLen, "prefix_repetition: output tokens")
	fs.IntVar(&d.CustomOutputLen, "custom-output-len", dd.CustomOutputLen, "custom: output tokens when a line gives none")

	rates := fs.String("request-rate", def.RequestRate.String(), "requests/s (inf = all at once); a comma list sweeps")
	fs.Float64Var(&sp.Burstiness, "burstiness", def.Burstiness, "Gamma shape of the arrival gaps (1 = Poisson)")
	concs := fs.String("max-concurrency", "", "maximum requests in flight; a comma list sweeps")
	fs.StringVar(&sp.RampUpStrategy, "ramp-up-strategy", "", "linear or exponential ramp of the request rate")
	fs.Float64Var(&sp.RampUpStartRPS, "ramp-up-start-rps", 0, "ramp-up start rate")
	fs.Float64Var(&sp.RampUpEndRPS, "ramp-up-end-rps", 0, "ramp-up end rate")
	fs.IntVar(&sp.NumWarmups, "num-warmups", 0, "warm-up requests before the measured run")
	fs.BoolVar(&sp.IgnoreEOS, "ignore-eos", false, "generate the full output length (set automatically for the random dataset)")
	var temp, topP optFloat
	var topK optInt
	fs.Var(&temp, "temperature", "sampling temperature (default 0, greedy, sent explicitly as vllm bench serve does)")
	fs.Var(&topP, "top-p", "top-p")
	fs.Var(&topK, "top-k", "top-k")
	fs.Float64Var(&sp.RequestTimeoutS, "request-timeout", def.RequestTimeoutS, "seconds before a request counts as failed (timeout)")
	fs.BoolVar(&sp.WarmConnections, "warm-connections", false, "open up to --max-concurrency keep-alive connections before the clock starts (HTTP backends), so TTFT holds no connection set-up")
	pm := fs.String("percentile-metrics", strings.Join(def.PercentileMetrics, ","), "metrics to report percentiles for: ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue")
	mp := fs.String("metric-percentiles", strings.Trim(strings.ReplaceAll(fmt.Sprint(def.MetricPercentiles), " ", ","), "[]"), "percentiles to report, e.g. 50,90,99")
	saveResult := fs.Bool("save-result", false, "save the result as JSON (vLLM's field names)")
	saveDetailed := fs.Bool("save-detailed", false, "include per-request arrays in the JSON")
	resultDir := fs.String("result-dir", "", "directory for the JSON result")
	resultFile := fs.String("result-filename", "", "JSON result file name (default vLLM's {label}-{rate}qps-…-{date}.json)")
	appendResult := fs.Bool("append-result", false, "append the JSON result to an existing file, one object per line, as vLLM does")
	readyTimeout := fs.Float64("ready-check-timeout-sec", 600, "seconds to wait for the server to answer a first request before the run, retrying every 5 s (0 = skip; not for inproc)")
	fs.Bool("disable-tqdm", false, "no progress bar")
	tf := addTelemetryFlags(fs)
	of := addOutputFlags(fs)
	if err := parse(fs, expandNargs(args)); err != nil {
		return err
	}
	usageErr := func(format string, a ...any) error {
		fmt.Fprintf(os.Stderr, "llmbench serve-bench: "+format+"\n", a...)
		return errUsage
	}
	if len(compare) > 0 {
		if len(compare) != 2 {
			return usageErr("--compare needs two result files")
		}
		return serveBenchCompare(os.Stdout, compare[0], compare[1])
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	limits, err := tf.limits()
	if err != nil {
		return usageErr("%v", err)
	}
	exports, err := of.exports()
	if err != nil {
		return usageErr("%v", err)
	}
	dev, err := openTelemetry(tf.device)
	if err != nil {
		return usageErr("%v", err)
	}
	defer dev.Close()
	if len(limits) > 0 {
		if err := power.Check(dev.gpus, dev.note, limits); err != nil {
			return err // one line saying why; nothing changed
		}
	}
	fmt.Fprintf(os.Stderr, "telemetry: %s\n", dev.note)
	var runOpts []benchrun.Option
	if tf.interval > 0 {
		runOpts = append(runOpts, benchrun.WithSampler(dev.sampler, tf.interval))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *inputLen > 0 {
		d.RandomInputLen = *inputLen
	}
	if *outputLen > 0 {
		d.RandomOutputLen, d.ShareGPTOutputLen, d.CustomOutputLen, d.PrefixRepetitionOutputLen, d.SonnetOutputLen = *outputLen, *outputLen, *outputLen, *outputLen, *outputLen
	}
	sp.Temperature, sp.TopP, sp.TopK = temp.v, topP.v, topK.v
	sp.PercentileMetrics = strings.Split(*pm, ",")
	for _, p := range strings.Split(*mp, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || v > 100 {
			return usageErr("--metric-percentiles: bad percentile %q", p)
		}
		sp.MetricPercentiles = append(sp.MetricPercentiles, v)
	}
	if len(goodput) > 0 {
		g, err := parseKV(goodput, ":", "--goodput")
		if err != nil {
			return usageErr("%v", err)
		}
		sp.Goodput = map[string]float64{}
		for k, v := range g {
			f, err := strconv.ParseFloat(v, 64)
			if (k != "ttft" && k != "tpot" && k != "e2el") || err != nil || f < 0 {
				return usageErr("--goodput %s:%s: want ttft, tpot or e2el and a non-negative number of ms", k, v)
			}
			sp.Goodput[k] = f
		}
	}
	hdr, err := parseKV(headers, "=", "--header")
	if err != nil {
		return usageErr("%v", err)
	}
	for k := range hdr {
		sp.HeaderNames = append(sp.HeaderNames, k)
	}
	if len(metadata) > 0 {
		if sp.Metadata, err = parseKV(metadata, "=", "--metadata"); err != nil {
			return usageErr("%v", err)
		}
	}
	var rateList []workloads.Rate
	for _, r := range strings.Split(*rates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || !(v > 0) {
			return usageErr("--request-rate: bad rate %q", r)
		}
		rateList = append(rateList, workloads.Rate(v))
	}
	concList := []int{0}
	if *concs != "" {
		concList = nil
		for _, c := range strings.Split(*concs, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || v <= 0 {
				return usageErr("--max-concurrency must be greater than 0, got %q", c)
			}
			concList = append(concList, v)
		}
	}
	if sp.RampUpStrategy != "" && (set["request-rate"] || !set["ramp-up-start-rps"] || !set["ramp-up-end-rps"]) {
		return usageErr("with --ramp-up-strategy give --ramp-up-start-rps and --ramp-up-end-rps, and no --request-rate")
	}
	if d.Name == "random" || d.Name == "prefix_repetition" {
		if d.Path != "" {
			return usageErr("cannot use the %q dataset with --dataset-path", d.Name)
		}
	}
	if d.Name == "random" {
		sp.IgnoreEOS = true // as vLLM: random prompts run to the requested length
	}
	switch sp.Backend {
	case "inproc", "openai", "openai-chat", "tgi", "llamacpp":
	default:
		return usageErr("unknown --backend %q (want inproc, openai, openai-chat, tgi or llamacpp)", sp.Backend)
	}
	if _, err := engineOptions(sp.Engine); err != nil {
		return usageErr("%v", err)
	}
	if sp.Backend != "inproc" {
		for _, f := range []string{"max-num-seqs", "max-num-batched-tokens", "block-size", "kv-cache-memory", "kv-cache-type", "no-prefix-cache"} {
			if set[f] {
				return usageErr("--%s configures the in-process engine: it needs --backend inproc", f)
			}
		}
		sp.Engine = workloads.EngineSpec{}
	}

	if sp.Backend != "inproc" {
		base := *baseURL
		if base == "" {
			base = fmt.Sprintf("http://%s:%d", *host, *port)
		}
		sp.BaseURL = strings.TrimRight(base, "/")
		sp.Endpoint = *endpoint
		if sp.Endpoint == "" {
			sp.Endpoint = serving.DefaultEndpoint(sp.Backend)
		}
	}
	sp.RequestRate = rateList[0] // the sweep's lists set every point's
	run := profiles.Run{Serve: &sp, Device: tf.device, PowerLimitW: limits, Sweep: &profiles.Sweep{RequestRate: rateList}}
	if *concs != "" {
		run.Sweep.MaxConcurrency = concList
	}
	job := &serveJob{ctxLen: *ctxLen, headers: hdr, readyTimeout: *readyTimeout, dev: dev, settle: tf.settle, runOpts: runOpts,
		save: serveSave{on: *saveResult, detailed: *saveDetailed, dir: *resultDir, file: *resultFile, append: *appendResult}}
	if !set["disable-tqdm"] {
		job.progress = progressBar
	}
	return job.runAndReport(ctx, run, of, exports)
}

// serveSave is what serve-bench's --save-result and friends ask for.
type serveSave struct {
	on, detailed, append bool
	dir, file            string
}

// serveJob is one serve-bench run: the backend's connection details, the telemetry
// device and power limits, how to show progress and what to save.
type serveJob struct {
	ctxLen       int               // inproc context size (0 = the model's)
	headers      map[string]string // HTTP headers (values never saved)
	readyTimeout float64           // seconds to wait for an HTTP server (0 = skip)
	dev          *telemetryDevice
	settle       time.Duration
	runOpts      []benchrun.Option
	progress     progressMode
	save         serveSave
	// live is the TUI run this job goes on inside (nil: headless): its points run on
	// its Reporter and what a headless run prints goes to its log.
	live *benchrun.Reporter
}

// runAndReport runs the job kept in the results store and writes the --export files.
func (j *serveJob) runAndReport(ctx context.Context, run profiles.Run, of *outputFlags, exports []string) error {
	rec := of.startRecord("serve-bench", run, j.dev)
	started := time.Now()
	results, err := j.execute(ctx, run, rec)
	if len(results) == 0 && err != nil && !errors.Is(err, context.Canceled) {
		// Nothing ran (a bad model, dataset or server): keep the failure, export nothing.
		rec.finish("serve-bench", report.Document{Title: run.Title(), Started: started}, err, nil)
		return err
	}
	doc := report.Document{Title: run.Title(), Started: started, Env: recordEnv(j.dev), Serving: results}
	for _, r := range results {
		doc.Partial = doc.Partial || r.Partial
	}
	if xerr := rec.finish("serve-bench", doc, err, exports); xerr != nil && err == nil {
		err = xerr
	}
	return err
}

// execute prepares the backend, tokenizer and dataset of run and runs every point
// of its sweep at each power limit, handing each finished request to rec.
func (j *serveJob) execute(ctx context.Context, run profiles.Run, rec *record) ([]*serving.Result, error) {
	sp := *run.Serve
	d := &sp.Dataset
	hdr := j.headers
	if hdr == nil {
		hdr = map[string]string{}
	}
	dev, limits := j.dev, run.PowerLimitW
	var err error
	// Backend and tokenizer.
	var client serving.Client
	var tok serving.Tokenizer
	var notes []string
	modelCtx := 0
	modelID, tokID := sp.Model, sp.Tokenizer
	var eng *engine.Engine // the inproc engine
	if sp.Backend == "inproc" {
		engOpts, err := engineOptions(sp.Engine)
		if err != nil {
			return nil, err
		}
		engOpts.Threads, engOpts.Context = sp.Threads, j.ctxLen
		e, id, err := serveBenchEngine(ctx, sp.Model, sp.SyntheticType, engOpts)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		eng = e
		modelID, tokID = id, id
		tok, modelCtx = e.Tok, e.Options().SeqContext
		client = &serving.InProc{Gen: e, Sampling: serving.Sampling{Temperature: sp.Temperature, TopP: sp.TopP, TopK: sp.TopK}, IgnoreEOS: sp.IgnoreEOS,
			Timeout: time.Duration(sp.RequestTimeoutS * float64(time.Second)), KeepText: j.save.detailed}
		eo := e.Options()
		logTo(j.live, os.Stderr, "%s", e.KVCache())
		notes = append(notes, fmt.Sprintf("inproc: continuous batching of up to %d requests and %d tokens a step; requests beyond them wait inside the engine and that wait counts in TTFT",
			eo.MaxNumSeqs, eo.MaxNumBatchedTokens))
	} else {
		base, ep := sp.BaseURL, sp.Endpoint
		if ep == "" {
			ep = serving.DefaultEndpoint(sp.Backend)
			sp.Endpoint = ep
		}
		if key := os.Getenv("OPENAI_API_KEY"); key != "" {
			if _, ok := hdr["Authorization"]; !ok {
				hdr["Authorization"] = "Bearer " + key
			}
		}
		maxConc := 0
		for _, p := range run.Points() {
			maxConc = max(maxConc, p.MaxConcurrency)
		}
		if maxConc == 0 {
			maxConc = min(d.NumPrompts, 4096)
		}
		hc := &http.Client{Transport: serving.NewTransport(maxConc)}
		if sp.Model == "" && (sp.Backend == "openai" || sp.Backend == "openai-chat") {
			if modelID, err = serveBenchFirstModel(ctx, hc, base, hdr); err != nil {
				return nil, err
			}
			sp.Model = modelID
		}
		if modelID == "" {
			modelID = sp.Backend
		}
		tokPath := sp.Tokenizer
		if tokPath == "" && strings.HasSuffix(sp.Model, ".gguf") {
			tokPath = sp.Model
		}
		if tok, tokID, err = serveBenchTokenizer(tokPath); err != nil {
			return nil, err
		}
		if tokPath == "" {
			logTo(j.live, os.Stderr, "warning: counting tokens with the built-in %s tokenizer; give --tokenizer FILE.gguf for the served model's", builtin.Name)
		}
		name := sp.ServedModelName
		if name == "" {
			name = sp.Model
		}
		client = &serving.HTTP{Backend: sp.Backend, URL: base + ep, Model: name, Headers: hdr, IgnoreEOS: sp.IgnoreEOS,
			Sampling: serving.Sampling{Temperature: sp.Temperature, TopP: sp.TopP, TopK: sp.TopK}, Tok: tok, HC: hc,
			Timeout: time.Duration(sp.RequestTimeoutS * float64(time.Second)), KeepText: j.save.detailed}
	}
	var data []byte
	if d.Path != "" {
		if data, err = os.ReadFile(d.Path); err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
	}
	ds, err := serving.LoadDataset(*d, data, tok, modelCtx)
	if err != nil {
		return nil, err
	}
	logTo(j.live, os.Stderr, "%s (%d prompts, %d skipped)", ds.Note, len(ds.Requests), ds.Skipped)
	if ds.Oversampled > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d of the %d requests repeat a prompt drawn at random because fewer passed the filters (as vLLM oversamples; --no-oversample to keep only those)",
			d.Name, ds.Oversampled, len(ds.Requests)))
	}

	// Points: the cross product of the rate and concurrency lists.
	run.Serve = &sp
	points := run.Points()
	sweep := len(points) > 1 || len(limits) > 1
	if sp.Backend != "inproc" {
		if j.readyTimeout > 0 {
			logTo(j.live, os.Stdout, "Starting initial single prompt test run...")
			if _, err := serving.WaitReady(ctx, client, &ds.Requests[0], time.Duration(j.readyTimeout*float64(time.Second)), 5*time.Second); err != nil {
				if ctx.Err() != nil {
					return nil, context.Canceled
				}
				return nil, fmt.Errorf("initial test run failed, check the benchmark arguments and the server: %w", err)
			}
			logTo(j.live, os.Stdout, "Initial test run completed.")
		} else {
			logTo(j.live, os.Stdout, "Skipping endpoint ready check.")
		}
	}
	var results []*serving.Result
	err = dev.sweep(ctx, "serve-bench", limits, j.settle, func(ctx context.Context, watts float64) error {
		for _, p := range points {
			b := &serving.Bench{Spec: p, Dataset: ds, Client: client, ModelID: modelID, TokenizerID: tokID, Notes: notes, PowerLimitW: watts}
			if eng != nil {
				b.Engine = func() serving.EngineStats { return serveBenchEngineStats(eng) }
			}
			if rec != nil {
				key := len(results)
				rec.w.Point(key, &serving.Result{Spec: p, ModelID: modelID, TokenizerID: tokID, Notes: notes, PowerLimitW: watts, Skipped: ds.Skipped, Requests: len(ds.Requests)})
				b.Warm, _ = client.(serving.ConnWarmer)
				b.Client = recordingClient{Client: client, w: rec.w, key: key}
			}
			res, err := serveBenchPoint(ctx, b, j.progress, j.runOpts, j.live)
			if res == nil {
				return err
			}
			results = append(results, res)
			date := time.Now()
			if j.save.on {
				name := j.save.file
				if name == "" {
					name = report.VLLMResultFilename(res, date)
				} else if len(points) > 1 {
					ext := filepath.Ext(name)
					name = fmt.Sprintf("%s-c%d-r%s%s", strings.TrimSuffix(name, ext), p.MaxConcurrency, p.RequestRate.String(), ext)
				}
				if watts > 0 {
					ext := filepath.Ext(name)
					name = fmt.Sprintf("%s-p%.0fw%s", strings.TrimSuffix(name, ext), watts, ext)
				}
				if j.save.dir != "" {
					if err := os.MkdirAll(j.save.dir, 0o755); err != nil {
						return err
					}
					name = filepath.Join(j.save.dir, name)
				}
				if err := serveBenchSave(name, j.save.append, res, report.VLLMJSONOptions{Detailed: j.save.detailed, Metadata: sp.Metadata, Date: date, Version: version}); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "saved %s\n", name)
			}
			if err != nil {
				if errors.Is(err, context.Canceled) || res.Partial {
					return context.Canceled
				}
				return err
			}
		}
		return nil
	})
	if sweep && j.live == nil && len(results) > 0 && (err == nil || errors.Is(err, context.Canceled)) {
		report.VLLMSweepTable(os.Stdout, results)
	}
	return results, err
}

// recordingClient hands every finished request of point key to the results store.
type recordingClient struct {
	serving.Client
	w   *profiles.Writer
	key int
}

// Do implements serving.Client.
func (c recordingClient) Do(ctx context.Context, req *serving.Request, rec *metrics.Record, now func() time.Duration) {
	c.Client.Do(ctx, req, rec, now)
	if !rec.Interrupted() {
		c.w.Request(c.key, *rec)
	}
}

// runProfileServe runs a profile's serve run headless: vLLM's blocks on stdout,
// progress on stderr, kept in the store, exported.
func runProfileServe(ctx context.Context, r profiles.Run, of *outputFlags, exports []string) error {
	dev, err := openTelemetry(cmpStr(r.Device, "auto"))
	if err != nil {
		return err
	}
	defer dev.Close()
	if len(r.PowerLimitW) > 0 {
		if err := power.Check(dev.gpus, dev.note, r.PowerLimitW); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "telemetry: %s\n", dev.note)
	job := &serveJob{readyTimeout: 600, dev: dev, settle: 15 * time.Second, progress: runProgress(),
		runOpts: []benchrun.Option{benchrun.WithSampler(dev.sampler, telemetry.DefaultInterval)}}
	return job.runAndReport(ctx, r, of, exports)
}

// serveBenchPoint runs one point through the run core, showing progress on stderr
// (a tqdm-style bar, a line per tenth, or nothing), and prints the vLLM block from
// the final result. Inside a TUI run (live not nil) it runs on live and prints nothing.
func serveBenchPoint(ctx context.Context, b *serving.Bench, prog progressMode, opts []benchrun.Option, live *benchrun.Reporter) (*serving.Result, error) {
	if live != nil {
		return pointResult(runOn(ctx, live, b))
	}
	pre := &serving.Result{Spec: b.Spec}
	report.VLLMPreamble(os.Stdout, pre)
	fmt.Println("Starting main benchmark run...")
	_, events := benchrun.Start(ctx, b, opts...)
	var done benchrun.Done
	drawn := false
	tenth := -1
	for ev := range events {
		switch e := ev.(type) {
		case benchrun.Log:
			if drawn {
				fmt.Fprint(os.Stderr, "\r\033[K")
			}
			fmt.Fprintln(os.Stderr, e.Text)
		case benchrun.Progress:
			if e.Total <= 0 {
				break
			}
			switch prog {
			case progressBar:
				fmt.Fprintf(os.Stderr, "\r%3.0f%%|%s| %d/%d [%s]", 100*e.Done/e.Total, bar(e.Done, e.Total, 40),
					int(e.Done), int(e.Total), e.At.Truncate(time.Second))
				drawn = true
			case progressLines:
				if t := int(10 * e.Done / e.Total); t != tenth {
					tenth = t
					fmt.Fprintf(os.Stderr, "serve-bench: %d/%d requests [%s]\n", int(e.Done), int(e.Total), e.At.Truncate(time.Second))
				}
			}
		case benchrun.Done:
			done = e
		}
	}
	if drawn {
		fmt.Fprintln(os.Stderr)
	}
	res, err := pointResult(done)
	if res != nil {
		report.VLLMFailures(os.Stdout, res)
		report.VLLMBlock(os.Stdout, res)
		report.VLLMExtras(os.Stdout, res)
	}
	return res, err
}

// pointResult is the result of a serving point's Done, marked partial when it
// stopped early (then with context.Canceled).
func pointResult(done benchrun.Done) (*serving.Result, error) {
	res, _ := done.Result.(*serving.Result)
	if res == nil {
		if done.Err == nil {
			done.Err = context.Canceled
		}
		return nil, done.Err
	}
	res.Partial = res.Partial || done.Partial
	if done.Partial {
		return res, context.Canceled
	}
	return res, done.Err
}

// serveBenchEngineStats reads the in-process engine's KV cache and scheduler counters.
func serveBenchEngineStats(e *engine.Engine) serving.EngineStats {
	kv, st := e.KVCache(), e.SchedulerStats()
	return serving.EngineStats{
		KVCacheType: strings.ToLower(kv.Type.String()), KVBlockSize: kv.BlockSize, KVBlocks: kv.Blocks,
		KVBytes: kv.Bytes(), KVSavedVsF16: kv.SavedVs(kernels.F16), KVSavedVsF32: kv.SavedVs(kernels.F32),
		PrefixCache: kv.PrefixCache, PrefixQueries: st.PrefixQueryTokens, PrefixHits: st.PrefixHitTokens,
		Preemptions: st.Preemptions,
	}
}

// serveBenchEngine loads the inproc model: the built-in one, a GGUF file or a
// synthetic shape (written once into the cache).
func serveBenchEngine(ctx context.Context, model, typ string, opts engine.Options) (*engine.Engine, string, error) {
	if model == "" {
		e, err := loadModel(ctx, "", opts)
		return e, builtin.Name, err
	}
	if _, err := os.Stat(model); err == nil {
		e, err := engine.Load(ctx, model, opts)
		return e, model, err
	}
	if _, err := synth.Lookup(model); err != nil {
		return nil, "", fmt.Errorf("--model %q: not a file and not a synthetic shape (%s)", model, strings.Join(synth.Shapes(), ", "))
	}
	dir, err := synth.DefaultCacheDir()
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "synthetic model %s %s (cached in %s)\n", model, typ, dir)
	path, err := synth.Ensure(ctx, dir, model, typ, synth.DefaultSeed, nil)
	if err != nil {
		return nil, "", err
	}
	e, err := engine.Load(ctx, path, opts)
	return e, "synthetic:" + model + "-" + typ, err
}

// serveBenchTokenizer reads the tokenizer of a GGUF file (the built-in model's when
// path is empty) without loading the weights.
func serveBenchTokenizer(path string) (serving.Tokenizer, string, error) {
	var f *gguf.File
	var err error
	id := path
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

// serveBenchFirstModel asks an OpenAI-compatible server for its first model, as vLLM
// does when --model is not given.
func serveBenchFirstModel(ctx context.Context, hc *http.Client, base string, hdr map[string]string) (string, error) {
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
		return "", fmt.Errorf("no --model given and %s/v1/models failed: %w", base, err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || len(body.Data) == 0 {
		return "", fmt.Errorf("no --model given and %s/v1/models lists no model (HTTP %d)", base, resp.StatusCode)
	}
	return body.Data[0].ID, nil
}

// serveBenchSave writes the result JSON to name; with appendResult (--append-result)
// it appends it on a new line of an existing file, as vLLM does.
func serveBenchSave(name string, appendResult bool, res *serving.Result, opt report.VLLMJSONOptions) error {
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

func serveBenchCompare(w io.Writer, pa, pb string) error {
	load := func(p string) (map[string]any, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		// A file written with --append-result holds one object per run: the last counts.
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var o map[string]any
			if err := dec.Decode(&o); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("compare %s: %w", p, err)
			}
			m = o
		}
		if m == nil {
			return nil, fmt.Errorf("compare %s: no result in the file", p)
		}
		return m, nil
	}
	a, err := load(pa)
	if err != nil {
		return err
	}
	b, err := load(pb)
	if err != nil {
		return err
	}
	return report.VLLMCompare(w, pa, pb, a, b)
}
