package main

import (
	"flag"
	"fmt"
	"strings"

	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
)

// serveBenchArgs are serve-bench's flags beyond the spec they fill.
type serveBenchArgs struct {
	sp                         workloads.ServeSpec
	baseURL, host, endpoint    string
	port, inputLen, outputLen  int
	headers, metadata, goodput listFlag
	compare                    listFlag
	rates, concs, pm, mp       string
	temp, topP                 optFloat
	topK                       optInt
	save                       jobs.SaveJSON
	saveResult                 bool
	readyTimeout               float64
	tf                         *telemetryFlags
	of                         *outputFlags
	vc                         *vllmFlags
}

var serveBenchExamples = []string{
	"llmbench serve-bench --backend inproc -m llama-1b --synthetic-type Q4_0 --dataset-name random --random-input-len 128 --random-output-len 64 --num-prompts 64 --max-concurrency 1,4,16",
	"llmbench serve-bench --backend openai --base-url http://127.0.0.1:8000 --model my-model --dataset-name sharegpt --dataset-path ShareGPT.json --num-prompts 200 --request-rate 10",
	"llmbench serve-bench --compare a.json b.json",
}

var serveBenchGroups = []flagGroup{
	{"vLLM compatible (vllm bench serve)", []string{"backend", "base-url", "host", "port", "endpoint", "model", "served-model-name", "tokenizer", "label",
		"dataset-name", "dataset-path", "num-prompts", "seed", "input-len", "output-len", "random-input-len", "random-output-len", "random-range-ratio", "random-prefix-len",
		"sonnet-input-len", "sonnet-output-len", "sonnet-prefix-len", "no-oversample", "sharegpt-output-len", "prefix-repetition-prefix-len", "prefix-repetition-suffix-len",
		"prefix-repetition-num-prefixes", "prefix-repetition-output-len", "custom-output-len", "request-rate", "burstiness", "max-concurrency", "ramp-up-strategy",
		"ramp-up-start-rps", "ramp-up-end-rps", "num-warmups", "ignore-eos", "temperature", "top-p", "top-k", "request-timeout", "percentile-metrics",
		"metric-percentiles", "goodput", "header", "metadata", "save-result", "save-detailed", "result-dir", "result-filename", "append-result",
		"ready-check-timeout-sec", "disable-tqdm"}},
	{"vLLM compatible: more sampling, request shaping, timeline, spec_bench", vllmGroupNames},
	{"in-process engine (--backend inproc)", []string{"m", "synthetic-type", "t", "c", "max-num-seqs", "max-num-batched-tokens", "block-size", "kv-cache-memory", "kv-cache-type", "no-prefix-cache",
		"model-draft", "draft-type", "draft-max", "draft-min", "draft-p-min"}},
	{"llmbench additions", []string{"warm-connections", "non-streaming", "energy-device", "compare", "device", "power-limit", "sample-interval", "settle-timeout", "export", "data-dir"}},
}

// defineServeBench defines serve-bench's flags on fs.
func defineServeBench(fs *flag.FlagSet) *serveBenchArgs {
	a := &serveBenchArgs{}
	sp, def := &a.sp, workloads.DefaultServe()
	fs.StringVar(&sp.Backend, "backend", "openai", "inproc (our engine, no HTTP), openai or vllm (/v1/completions), openai-chat, tgi (/generate_stream; /generate with --non-streaming) or llamacpp (/completion)")
	fs.StringVar(&a.baseURL, "base-url", "", "server base URL (default http://HOST:PORT)")
	fs.StringVar(&a.host, "host", "127.0.0.1", "server host when --base-url is not given")
	fs.IntVar(&a.port, "port", 8000, "server port when --base-url is not given")
	fs.StringVar(&a.endpoint, "endpoint", "", "API endpoint (default per backend: /v1/completions, /v1/chat/completions, /generate_stream (/generate with --non-streaming), /completion)")
	fs.StringVar(&sp.Model, "model", "", "model name for the server; with --backend inproc a GGUF file or a synthetic shape (llama-1b, …); default: the server's first model / the built-in stories260K")
	fs.StringVar(&sp.Model, "m", "", "shorthand for --model")
	fs.StringVar(&sp.ServedModelName, "served-model-name", "", "model name sent in requests (default --model)")
	fs.StringVar(&sp.Tokenizer, "tokenizer", "", "GGUF `file` whose tokenizer counts tokens (default: the model's, else the built-in one)")
	fs.StringVar(&sp.Label, "label", "", "label (prefix) of the result file name (default: the backend)")
	fs.StringVar(&sp.SyntheticType, "synthetic-type", def.SyntheticType, "weight type of a synthetic --model shape (inproc): "+strings.Join(synth.FileTypes(), ", "))
	fs.StringVar(&sp.EnergyDevice, "energy-device", "", "`device` whose energy counts: cpu (RAPL), gpu, gpu:N or none (default: cpu for inproc, none for a server)")
	fs.IntVar(&sp.Threads, "t", 0, "inproc: threads (0 = all cores)")
	fs.IntVar(&sp.Engine.Context, "c", 0, "inproc: context size (0 = the model's)")
	addEngineFlags(fs, &sp.Engine, "inproc: ")
	addDraftFlags(fs, &sp.Engine, "inproc: ", "model-draft")
	fs.Var(&a.headers, "header", "KEY=VALUE header sent with every request (repeatable; values never saved)")
	fs.Var(&a.metadata, "metadata", "KEY=VALUE saved in the result JSON (repeatable)")
	fs.Var(&a.goodput, "goodput", "SLO KEY:MS for goodput, KEY in ttft, tpot, e2el (repeatable)")
	fs.Var(&a.compare, "compare", "compare two saved results: --compare A.json B.json")
	defineDataset(fs, &sp.Dataset, def.Dataset, a)
	fs.StringVar(&a.rates, "request-rate", def.RequestRate.String(), "requests/s (inf = all at once); a comma list sweeps")
	fs.Float64Var(&sp.Burstiness, "burstiness", def.Burstiness, "Gamma shape of the arrival gaps (1 = Poisson)")
	fs.StringVar(&a.concs, "max-concurrency", "", "maximum requests in flight; a comma list sweeps")
	fs.StringVar(&sp.RampUpStrategy, "ramp-up-strategy", "", "linear or exponential ramp of the request rate")
	fs.Float64Var(&sp.RampUpStartRPS, "ramp-up-start-rps", 0, "ramp-up start rate")
	fs.Float64Var(&sp.RampUpEndRPS, "ramp-up-end-rps", 0, "ramp-up end rate")
	fs.BoolVar(&sp.WarmConnections, "warm-connections", false, "open up to --max-concurrency keep-alive connections before the clock starts (HTTP backends), so TTFT holds no connection set-up")
	fs.BoolVar(&sp.NonStreaming, "non-streaming", false, `ask for whole answers ("stream": false; TGI /generate) and measure only E2EL (TTFT, TPOT, ITL n/a); not vLLM's --no-stream`)
	fs.IntVar(&sp.NumWarmups, "num-warmups", 0, "warm-up requests before the measured run")
	fs.BoolVar(&sp.IgnoreEOS, "ignore-eos", false, "generate the full output length (set automatically for the random dataset)")
	fs.Var(&a.temp, "temperature", "sampling temperature (default 0, greedy, sent explicitly as vllm bench serve does)")
	fs.Var(&a.topP, "top-p", "top-p")
	fs.Var(&a.topK, "top-k", "top-k")
	fs.Float64Var(&sp.RequestTimeoutS, "request-timeout", def.RequestTimeoutS, "seconds before a request counts as failed (timeout)")
	fs.StringVar(&a.pm, "percentile-metrics", strings.Join(def.PercentileMetrics, ","), "metrics to report percentiles for: ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue")
	fs.StringVar(&a.mp, "metric-percentiles", strings.Trim(strings.ReplaceAll(fmt.Sprint(def.MetricPercentiles), " ", ","), "[]"), "percentiles to report, e.g. 50,90,99")
	fs.BoolVar(&a.saveResult, "save-result", false, "save the result as JSON (vLLM's field names)")
	fs.BoolVar(&a.save.Detailed, "save-detailed", false, "include per-request arrays in the JSON")
	fs.StringVar(&a.save.Dir, "result-dir", "", "directory for the JSON result")
	fs.StringVar(&a.save.File, "result-filename", "", "JSON result file name (default vLLM's {label}-{rate}qps-…-{date}.json)")
	fs.BoolVar(&a.save.Append, "append-result", false, "append the JSON result to an existing file, one object per line, as vLLM does")
	fs.Float64Var(&a.readyTimeout, "ready-check-timeout-sec", 600, "seconds to wait for the server to answer a first request before the run, retrying every 5 s (0 = skip; not for inproc)")
	fs.Bool("disable-tqdm", false, "no progress bar")
	a.tf = addTelemetryFlags(fs)
	a.of = addOutputFlags(fs)
	a.vc = defineVLLM(fs, sp)
	return a
}

// defineDataset defines the dataset flags (vLLM's names) on fs.
func defineDataset(fs *flag.FlagSet, d *workloads.DatasetSpec, dd workloads.DatasetSpec, a *serveBenchArgs) {
	fs.StringVar(&d.Name, "dataset-name", dd.Name, "sharegpt, burstgpt (CSV), sonnet, random, prefix_repetition, custom (JSONL), spec_bench (question.jsonl) or txt-slices (text)")
	fs.StringVar(&d.Path, "dataset-path", "", "dataset file (sharegpt JSON, burstgpt CSV, sonnet text, custom JSONL, spec_bench JSONL, txt-slices text)")
	fs.IntVar(&d.NumPrompts, "num-prompts", dd.NumPrompts, "number of prompts to send")
	fs.Int64Var(&d.Seed, "seed", 0, "random seed (dataset sampling and arrival times)")
	fs.IntVar(&a.inputLen, "input-len", 0, "general input length (maps to --random-input-len)")
	fs.IntVar(&a.outputLen, "output-len", 0, "general output length (maps to every dataset's output length)")
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
}
