// Package server is llmbench's OpenAI-compatible HTTP server: /v1/completions and
// /v1/chat/completions (streamed as server-sent events or not), /v1/models and
// /v1/models/{id}, /tokenize and /detokenize (vLLM's and llama-server's shapes), /health
// and /metrics (Prometheus, with vLLM's metric names beside ours).
//
// The server generates through a small Generator interface: the engine, whose
// continuous-batching scheduler runs up to its --max-num-seqs requests in one batch and
// also satisfies StatsReporter (running and waiting sequences, KV blocks). The server's
// own bounded admission queue holds the requests beyond Config.MaxRunning and answers
// 429 when it is full.
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"llmbench/engine"
)

// Generator runs one generation, calling emit for each token, as engine.Engine does.
// It must stop soon after ctx is cancelled or emit returns an error, call emit from one
// goroutine at a time and never after it returns, and may be called concurrently (up to
// Config.MaxRunning calls at once; a batching scheduler sets that to its --max-num-seqs).
type Generator interface {
	Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error)
}

// Tokenizer is what the server needs of a tokenizer: prompts are tokenized before
// admission, so that a prompt too long for the context is a 400 and usage counts are
// known. engine's tokenizer satisfies it.
type Tokenizer interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
	VocabSize() int
}

// SchedulerStats is a snapshot of a scheduler's state for /metrics (the engine's
// type: running and waiting sequences, KV blocks, prefix-cache tokens).
type SchedulerStats = engine.SchedulerStats

// StatsReporter is implemented by a Generator that schedules requests itself (the
// continuous-batching scheduler); /metrics then reports its figures.
type StatsReporter interface {
	SchedulerStats() SchedulerStats
}

// Defaults for the zero values of Config.
const (
	DefaultMaxBody = 4 << 20
	// QueueMemFraction is the share of the available memory that the requests waiting
	// in the server's queue may take, by QueueBound's estimate of a waiting request.
	QueueMemFraction = 0.05
	// MinQueue is the queue bound when the available memory is unknown or small, and
	// MaxQueueBound the largest bound QueueBound derives.
	MinQueue      = 64
	MaxQueueBound = 1 << 16
	// waitFixedBytes is what a waiting request holds whatever its prompt: its
	// goroutine's stack, the connection's buffers, the parsed request.
	waitFixedBytes = 64 << 10
	// waitBytesPerToken is what a waiting request holds per prompt token: the body,
	// the prompt text decoded from it and the token ids.
	waitBytesPerToken = 24
)

// QueueBound derives how many requests may wait for a generation slot from the
// memory available (bytes; 0 = unknown) and a request's context in tokens (0 =
// unknown, taken as 4096): QueueMemFraction of the memory over the most one waiting
// request holds, between MinQueue and MaxQueueBound. how says so in words.
func QueueBound(avail int64, context int) (n int, how string) {
	if context <= 0 {
		context = 4096
	}
	per := int64(waitFixedBytes + waitBytesPerToken*context)
	if avail <= 0 {
		return MinQueue, "the available memory is unknown"
	}
	n = int(min(max(int64(QueueMemFraction*float64(avail))/per, MinQueue), MaxQueueBound))
	return n, fmt.Sprintf("%.0f %% of the %.1f GiB available, %d KiB a waiting request", 100*QueueMemFraction, float64(avail)/(1<<30), per>>10)
}

// Config configures New.
type Config struct {
	Gen        Generator
	Tok        Tokenizer // nil: prompts are passed as text and the engine tokenizes them
	Model      string    // the served model name (/v1/models, "model" in answers)
	Root       string    // where the model came from (a path), shown in /v1/models
	Context    int       // a request's context (prompt + max_tokens are clamped to it); 0 = unknown (no early check)
	Template   Template  // chat template; the zero value is the plain fallback
	APIKey     string    // when set, /v1/ requests need "Authorization: Bearer APIKey"
	MaxBody    int64     // request body limit in bytes (413 beyond); 0 = DefaultMaxBody
	MaxQueue   int       // requests that may wait for a slot (429 beyond, before the body is read); 0 = QueueBound of the memory available, < 0 = none
	MaxRunning int       // Generate calls at once (the engine's MaxNumSeqs); 0 = 1
	// RequestTimeout bounds a request from admission to its last token; 0 = none.
	RequestTimeout time.Duration
	// BodyTimeout bounds reading a request body; 0 = 30 s.
	BodyTimeout time.Duration
	Log         *log.Logger // one line per request; nil = silent
}

// Server is the HTTP server state: the admission queue and the counters of /metrics.
type Server struct {
	cfg     Config
	queueBy string // how MaxQueue was set, for the startup line
	slots   chan struct{}
	running atomic.Int64  // requests holding a generation slot
	waiting atomic.Int64  // requests admitted and not yet running (their body may still be read)
	held    atomic.Int64  // running + waiting: at most MaxRunning + MaxQueue
	stats   StatsReporter // nil when Gen does not report
	m       *counters
	mux     *http.ServeMux
	start   time.Time
}

// New returns a server over cfg.Gen.
func New(cfg Config) (*Server, error) {
	if cfg.Gen == nil {
		return nil, errors.New("server: no generator")
	}
	if cfg.Model == "" {
		cfg.Model = "llmbench"
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	queueBy := "set by --max-queue"
	switch {
	case cfg.MaxQueue == 0:
		cfg.MaxQueue, queueBy = QueueBound(engine.MemAvailable(), cfg.Context)
	case cfg.MaxQueue < 0:
		cfg.MaxQueue = 0
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 1
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	if cfg.Template.Name == "" {
		cfg.Template = Template{Name: "plain", Source: "default"}
	}
	if _, err := cfg.Template.Render(nil); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, queueBy: queueBy, slots: make(chan struct{}, cfg.MaxRunning), mux: http.NewServeMux(), start: time.Now()}
	s.stats, _ = cfg.Gen.(StatsReporter)
	s.m = newCounters(s)
	s.mux.HandleFunc("/v1/completions", s.auth(s.post(s.completions)))
	s.mux.HandleFunc("/v1/chat/completions", s.auth(s.post(s.chat)))
	s.mux.HandleFunc("/v1/models", s.auth(s.get(s.models)))
	s.mux.HandleFunc("/v1/models/{id...}", s.auth(s.get(s.model)))
	s.mux.HandleFunc("/tokenize", s.auth(s.post(s.tokenize)))
	s.mux.HandleFunc("/detokenize", s.auth(s.post(s.detokenize)))
	s.mux.HandleFunc("/health", s.get(s.health))
	s.mux.HandleFunc("/metrics", s.get(s.metrics))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	return s, nil
}

// Handler returns the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.mux }

// Config returns the configuration in force (defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// QueueSizing says how Config().MaxQueue was chosen: derived from the memory
// available (QueueBound's words) or set.
func (s *Server) QueueSizing() string { return s.queueBy }

// Drain waits until no request is running or waiting, or ctx ends: after the HTTP
// server has shut down, so that the generator is not closed under a generation.
func (s *Server) Drain(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for s.running.Load() != 0 || s.waiting.Load() != 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// errQueueFull is the admission queue's refusal.
var errQueueFull = errors.New("queue full")

// ticket is a request's place in admission. It is taken before the request's body is
// read or its prompt tokenized, so that a full server answers 429 without doing
// either; wait turns it into a generation slot.
type ticket struct {
	s       *Server
	running bool
}

// reserve takes one of the MaxRunning + MaxQueue places the server holds requests in,
// or returns errQueueFull. The place counts as waiting (llmbench_num_requests_waiting)
// until wait gets it a slot; release gives it back.
func (s *Server) reserve() (*ticket, error) {
	if s.held.Add(1) > int64(s.cfg.MaxRunning+s.cfg.MaxQueue) {
		s.held.Add(-1)
		return nil, errQueueFull
	}
	s.waiting.Add(1)
	return &ticket{s: s}, nil
}

// wait takes a generation slot, waiting while MaxRunning requests run, until ctx ends.
func (t *ticket) wait(ctx context.Context) error {
	select {
	case t.s.slots <- struct{}{}:
		t.s.waiting.Add(-1)
		t.s.running.Add(1)
		t.running = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the place (and its slot, if it got one) back.
func (t *ticket) release() {
	if t.running {
		t.s.running.Add(-1)
		<-t.s.slots
	} else {
		t.s.waiting.Add(-1)
	}
	t.s.held.Add(-1)
}

// auth checks the API key of /v1/ requests.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.APIKey == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.APIKey)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="llmbench"`)
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
				"missing or wrong API key: send the header Authorization: Bearer KEY")
			return
		}
		h(w, r)
	}
}

func (s *Server) post(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", r.Method+" "+r.URL.Path+": use POST")
			return
		}
		h(w, r)
	}
}

func (s *Server) get(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", r.Method+" "+r.URL.Path+": use GET")
			return
		}
		h(w, r)
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// modelObject is the served model as OpenAI's model object (with vLLM's root and
// max_model_len).
func (s *Server) modelObject() map[string]any {
	m := map[string]any{"id": s.cfg.Model, "object": "model", "created": s.start.Unix(), "owned_by": "llmbench", "root": s.cfg.Root}
	if s.cfg.Context > 0 {
		m["max_model_len"] = s.cfg.Context
	}
	return m
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
}

// model is GET /v1/models/{id}: the served model, or OpenAI's 404 for another id.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != s.cfg.Model {
		writeAPIError(w, modelNotFound(id, s.cfg.Model))
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}

// apiError is an error answered as OpenAI's {"error":{…}} object.
type apiError struct {
	Status  int
	Type    string
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// errorBody is OpenAI's error object.
func errorBody(typ, code, msg string) map[string]any {
	var c any
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, errorBody(typ, code, msg))
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	if e.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, e.Status, e.Type, e.Code, e.Message)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding the answer failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log.Printf(format, args...)
	}
}

// clientIP is for the log line only.
func clientIP(r *http.Request) string {
	if i := strings.LastIndexByte(r.RemoteAddr, ':'); i > 0 {
		return r.RemoteAddr[:i]
	}
	return r.RemoteAddr
}
