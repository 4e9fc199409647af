package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/server"
	"llmbench/engine/synth"
	"llmbench/workloads"
)

// serveArgs are llmbench serve's flags.
type serveArgs struct {
	path     string
	shape    string
	typ      string
	host     string
	port     int
	apiKey   string
	maxQueue int
	maxBody  int64
	timeout  time.Duration
	threads  int
	ctxSize  int
	seqCtx   int
	name     string
	tmplName string
	quiet    bool
	es       workloads.EngineSpec
}

// defineServe defines llmbench serve's flags on fs.
func defineServe(fs *flag.FlagSet) *serveArgs {
	a := &serveArgs{}
	fs.StringVar(&a.path, "m", "", "GGUF model `file` (default: the built-in stories260K)")
	fs.StringVar(&a.shape, "shape", "", "synthetic model `shape` ("+strings.Join(synth.Shapes(), ", ")+"), written once into the cache")
	fs.StringVar(&a.typ, "type", "", "weight `type` of the synthetic --shape ("+strings.Join(synth.FileTypes(), ", ")+")")
	fs.StringVar(&a.host, "host", "127.0.0.1", "address to listen on (0.0.0.0 exposes the server to the network)")
	fs.IntVar(&a.port, "port", 8080, "port to listen on (0: any free port, printed at startup)")
	fs.StringVar(&a.apiKey, "api-key", "", "require Authorization: Bearer `KEY` on /v1/ requests (default: $LLMBENCH_API_KEY, else none)")
	fs.IntVar(&a.maxQueue, "max-queue", 0, "requests that may wait for the engine; beyond it the server answers 429 (0: derived from the memory available, shown at start; -1: none wait)")
	fs.Int64Var(&a.maxBody, "max-body", server.DefaultMaxBody, "request body limit in `bytes` (413 beyond)")
	fs.DurationVar(&a.timeout, "timeout", 10*time.Minute, "limit on one request, queueing and generation (0 = none)")
	fs.IntVar(&a.threads, "t", 0, "threads (0 = all cores)")
	fs.IntVar(&a.ctxSize, "c", 0, "context size (0 = the model's)")
	addEngineFlags(fs, &a.es, "")
	addDraftFlags(fs, &a.es, "", "md", "model-draft")
	fs.IntVar(&a.seqCtx, "seq-context", 0, "context of one request, prompt plus output (0 = min(context, 4096), at most the KV cache pool's tokens)")
	fs.StringVar(&a.name, "served-model-name", "", "model name in /v1/models and in answers (default: the file name without .gguf)")
	fs.StringVar(&a.tmplName, "chat-template", "", "chat template family, overriding the one detected from the model ("+strings.Join(server.TemplateNames(), ", ")+")")
	fs.BoolVar(&a.quiet, "quiet", false, "no log line per request")
	return a
}

// addEngineFlags registers the engine's batching and KV cache flags (vLLM's names)
// into es; help texts start with prefix ("inproc: " for serve-bench).
func addEngineFlags(fs *flag.FlagSet, es *workloads.EngineSpec, prefix string) {
	fs.IntVar(&es.MaxNumSeqs, "max-num-seqs", engine.DefaultMaxNumSeqs, prefix+"requests batched together at most; more wait in the engine's queue")
	fs.IntVar(&es.MaxNumBatchedTokens, "max-num-batched-tokens", engine.DefaultMaxNumBatchedTokens, prefix+"tokens in one batched step at most: a decode token per running request plus chunks of prompts (chunked prefill)")
	fs.IntVar(&es.BlockSize, "block-size", engine.DefaultBlockSize, prefix+"tokens per KV cache block")
	fs.StringVar(&es.KVCacheMemory, "kv-cache-memory", "", prefix+"KV cache pool `size`: bytes (512MiB, 2GB) or a share of the memory available (30%) (default: max-num-seqs × seq-context tokens, at most "+
		strconv.Itoa(int(100*engine.KVMemFraction))+"% of the memory available)")
	fs.StringVar(&es.KVCacheType, "kv-cache-type", "f16", prefix+"KV cache element `type`: f16, q8_0 (about half of f16's memory) or f32")
	fs.BoolVar(&es.NoPrefixCache, "no-prefix-cache", false, prefix+"do not share KV blocks of common prompt prefixes between requests")
}

// addDraftFlags registers the speculative-decoding flags (llama-server's names) into
// es; help texts start with prefix. model is the draft model flag's name ("md" for
// serve, as llama-server; "model-draft" for serve-bench).
func addDraftFlags(fs *flag.FlagSet, es *workloads.EngineSpec, prefix string, names ...string) {
	for _, n := range names {
		fs.StringVar(&es.Draft, n, "", prefix+"draft `model` for speculative decoding: a GGUF file, "+workloads.BuiltinModel+" or a synthetic shape (spec-base-draft, …); it must share the model's vocabulary")
	}
	fs.StringVar(&es.DraftType, "draft-type", "", prefix+"weight `type` of a synthetic draft shape (default: the model's)")
	fs.IntVar(&es.DraftMax, "draft-max", 0, prefix+"tokens the draft proposes a step at most (0 = "+strconv.Itoa(engine.DefaultDraftMax)+")")
	fs.IntVar(&es.DraftMin, "draft-min", 0, prefix+"tokens the draft proposes a step at least, however unsure")
	fs.Float64Var(&es.DraftPMin, "draft-p-min", 0, prefix+"the draft stops once its likeliest next token is less probable than this, after --draft-min tokens (0 = "+
		strconv.FormatFloat(engine.DefaultDraftPMin, 'g', -1, 64)+"; negative: never)")
}

// check refuses a bad combination of serve's flags in one line (rest: the
// positional arguments, none expected).
func (a *serveArgs) check(rest []string) error {
	switch {
	case len(rest) > 0:
		return fmt.Errorf("unexpected argument %q", rest[0])
	case a.path != "" && a.shape != "":
		return fmt.Errorf("give -m FILE or --shape S --type T, not both")
	case (a.shape == "") != (a.typ == ""):
		return fmt.Errorf("--shape and --type go together")
	case a.port < 0 || a.port > 65535:
		return fmt.Errorf("--port %d: out of range", a.port)
	case a.maxBody <= 0:
		return fmt.Errorf("--max-body must be positive")
	case a.seqCtx < 0:
		return fmt.Errorf("--seq-context must not be negative")
	}
	return nil
}
