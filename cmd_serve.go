package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/server"
	"llmbench/engine/synth"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
)

func runServe(ctx context.Context, args []string) error {
	fs := newFlags("serve", "[-m FILE | --shape S --type T] [--host H] [--port N] [--api-key KEY] [--max-queue N] [--max-body BYTES] [-t N] [-c N] [--max-num-seqs N] [--max-num-batched-tokens N] [--block-size N] [--kv-cache-memory BYTES|P%] [--kv-cache-type T] [--no-prefix-cache] [--served-model-name NAME] [--chat-template NAME]", nil)
	path := fs.String("m", "", "GGUF model `file` (default: the built-in stories260K)")
	shape := fs.String("shape", "", "synthetic model `shape` ("+strings.Join(synth.Shapes(), ", ")+"), written once into the cache")
	typ := fs.String("type", "", "weight `type` of the synthetic --shape ("+strings.Join(synth.FileTypes(), ", ")+")")
	host := fs.String("host", "127.0.0.1", "address to listen on (0.0.0.0 exposes the server to the network)")
	port := fs.Int("port", 8080, "port to listen on (0: any free port, printed at startup)")
	apiKey := fs.String("api-key", "", "require Authorization: Bearer `KEY` on /v1/ requests (default: $LLMBENCH_API_KEY, else none)")
	maxQueue := fs.Int("max-queue", server.DefaultMaxQueue, "requests that may wait for the engine; beyond it the server answers 429 (0: none wait)")
	maxBody := fs.Int64("max-body", server.DefaultMaxBody, "request body limit in `bytes` (413 beyond)")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit on one request, queueing and generation (0 = none)")
	threads := fs.Int("t", 0, "threads (0 = all cores)")
	ctxSize := fs.Int("c", 0, "context size (0 = the model's)")
	var es workloads.EngineSpec
	addEngineFlags(fs, &es, "")
	seqCtx := fs.Int("seq-context", 0, "context of one request, prompt plus output (0 = min(context, 4096), at most the KV cache pool's tokens)")
	name := fs.String("served-model-name", "", "model name in /v1/models and in answers (default: the file name without .gguf)")
	tmplName := fs.String("chat-template", "", "chat template family, overriding the one detected from the model ("+strings.Join(server.TemplateNames(), ", ")+")")
	quiet := fs.Bool("quiet", false, "no log line per request")
	if err := parse(fs, args); err != nil {
		return err
	}
	usageErr := func(format string, a ...any) error {
		fmt.Fprintf(os.Stderr, "llmbench serve: "+format+"\n", a...)
		return errUsage
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case *path != "" && *shape != "":
		return usageErr("give -m FILE or --shape S --type T, not both")
	case (*shape == "") != (*typ == ""):
		return usageErr("--shape and --type go together")
	case *port < 0 || *port > 65535:
		return usageErr("--port %d: out of range", *port)
	case *maxBody <= 0:
		return usageErr("--max-body must be positive")
	case *seqCtx < 0:
		return usageErr("--seq-context must not be negative")
	}
	if *apiKey == "" {
		*apiKey = os.Getenv("LLMBENCH_API_KEY")
	}
	queue := *maxQueue
	if queue == 0 {
		queue = -1 // server.Config: negative = nobody waits
	}
	var tmpl server.Template
	if *tmplName != "" {
		t, err := server.TemplateByName(*tmplName)
		if err != nil {
			return usageErr("--chat-template: %v", err)
		}
		tmpl = t
	}

	// The model.
	opts, err := jobs.EngineOptions(es)
	if err != nil {
		return usageErr("%v", err)
	}
	opts.Threads, opts.Context, opts.SeqContext = *threads, *ctxSize, *seqCtx
	ref, err := jobs.ModelRef(cmpStr(*path, *shape), *typ)
	if err != nil {
		return usageErr("%v", err)
	}
	e, file, err := jobs.OpenModel(ctx, ref, opts, "", nil)
	if err != nil {
		return err
	}
	if ref.Shape != "" {
		fmt.Fprintf(os.Stderr, "synthetic model %s %s: %s\n", ref.Shape, ref.Type, file)
	}
	id := strings.TrimSuffix(filepath.Base(file), ".gguf") // the built-in model's name, a file's name, "llama-1b-Q4_0"
	defer e.Close()
	if *name != "" {
		id = *name
	}
	if tmpl.Name == "" {
		src, _ := e.File.String("tokenizer.chat_template")
		tmpl = server.DetectTemplate(src)
	}
	var logger *log.Logger
	if !*quiet {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	srv, err := server.New(server.Config{
		Gen: e, Tok: e.Tok, Model: id, Root: e.Source, Context: e.Options().SeqContext, Template: tmpl,
		APIKey: *apiKey, MaxBody: *maxBody, MaxQueue: queue, MaxRunning: e.Options().MaxNumSeqs, RequestTimeout: *timeout, Log: logger,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	eo := e.Options()
	fmt.Fprintf(os.Stderr, "model: %s as %q (%s, %d threads, context %d per request)\n", e.Source, id, e.Backend().Name(), e.Backend().Threads(), eo.SeqContext)
	fmt.Fprintf(os.Stderr, "chat template: %s (%s)\n", tmpl.Name, tmpl.Source)
	auth := "no API key"
	if *apiKey != "" {
		auth = "API key required"
	}
	fmt.Fprintf(os.Stderr, "batching: up to %d requests and %d tokens a step, up to %d waiting; %s\n", eo.MaxNumSeqs, eo.MaxNumBatchedTokens, max(queue, 0), auth)
	fmt.Fprintln(os.Stderr, e.KVCache())
	fmt.Fprintf(os.Stderr, "listening on http://%s (/v1/completions, /v1/chat/completions, /v1/models, /health, /metrics)\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(os.Stderr, "shutting down: finishing requests in flight (5 s at most)")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close() // cuts the streams still running; their generations stop with their contexts
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if err := srv.Drain(dctx); err != nil {
		return errors.New("serve: a generation did not stop within 5 s of shutdown")
	}
	return nil
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
