package main

import (
	"cmp"
	"context"
	"errors"
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
	"llmbench/workloads/jobs"
)

func runServe(ctx context.Context, args []string) error {
	fs := newFlags("serve", "[-m FILE | --shape S --type T] [--host H] [--port N] [--api-key KEY] [--max-queue N] [--max-body BYTES] [-t N] [-c N] [--max-num-seqs N] [--max-num-batched-tokens N] [--block-size N] [--kv-cache-memory BYTES|P%] [--kv-cache-type T] [--no-prefix-cache] [-md DRAFT [--draft-max N] [--draft-min N] [--draft-p-min P]] [--served-model-name NAME] [--chat-template NAME]", nil)
	a := defineServe(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := a.check(fs.Args()); err != nil {
		return usageErr("serve", err)
	}
	if a.apiKey == "" {
		a.apiKey = os.Getenv("LLMBENCH_API_KEY")
	}
	var tmpl server.Template
	if a.tmplName != "" {
		t, err := server.TemplateByName(a.tmplName)
		if err != nil {
			return usageErr("serve", fmt.Errorf("--chat-template: %v", err))
		}
		tmpl = t
	}

	// The model.
	opts, err := jobs.EngineOptions(a.es)
	if err != nil {
		return usageErr("serve", err)
	}
	opts.Threads, opts.Context, opts.SeqContext = a.threads, a.ctxSize, a.seqCtx
	ref, err := jobs.ModelRef(cmp.Or(a.path, a.shape), a.typ)
	if err != nil {
		return usageErr("serve", err)
	}
	if _, err := jobs.SetDraft(ctx, a.es, a.typ, &opts, "", nil); err != nil {
		return err
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
	if a.name != "" {
		id = a.name
	}
	if tmpl.Name == "" {
		src, _ := e.File.String("tokenizer.chat_template")
		tmpl = server.DetectTemplate(src)
	}
	var logger *log.Logger
	if !a.quiet {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	srv, err := server.New(server.Config{
		Gen: e, Tok: e.Tok, Model: id, Root: e.Source, Context: e.Options().SeqContext, Template: tmpl,
		APIKey: a.apiKey, MaxBody: a.maxBody, MaxQueue: a.maxQueue, MaxRunning: e.Options().MaxNumSeqs, RequestTimeout: a.timeout, Log: logger,
	})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(a.host, strconv.Itoa(a.port)))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	banner(e, id, tmpl, srv, a.apiKey != "", ln.Addr())
	return serveUntil(ctx, hs, ln, srv)
}

// serveUntil serves on ln until ctx ends, then shuts down: requests in flight get 5 s
// to finish and the engine 5 s to stop its generations.
func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener, srv *server.Server) error {
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

// banner tells stderr what the server serves and how.
func banner(e *engine.Engine, id string, tmpl server.Template, srv *server.Server, withKey bool, addr net.Addr) {
	eo := e.Options()
	fmt.Fprintf(os.Stderr, "model: %s as %q (%s, %d threads, context %d per request)\n", e.Source, id, e.Backend().Name(), e.Backend().Threads(), eo.SeqContext)
	fmt.Fprintf(os.Stderr, "chat template: %s (%s)\n", tmpl.Name, tmpl.Source)
	auth := "no API key"
	if withKey {
		auth = "API key required"
	}
	fmt.Fprintf(os.Stderr, "batching: up to %d requests and %d tokens a step, up to %d waiting (%s; 429 beyond); %s\n",
		eo.MaxNumSeqs, eo.MaxNumBatchedTokens, srv.Config().MaxQueue, srv.QueueSizing(), auth)
	fmt.Fprintln(os.Stderr, e.KVCache())
	if d, ok := e.DraftInfo(); ok {
		fmt.Fprintln(os.Stderr, d)
	}
	fmt.Fprintln(os.Stderr, e.Partitions())
	fmt.Fprintf(os.Stderr, "listening on http://%s (/v1/completions, /v1/chat/completions, /v1/models, /v1/models/{id}, /tokenize, /detokenize, /health, /metrics)\n", addr)

}
