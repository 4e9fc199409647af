package serving

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"llmbench/engine"
	"llmbench/engine/sample"
	"llmbench/workloads/metrics"
)

// Client sends one request and fills its record: Start (just before sending), the
// chunk times, output tokens and, on failure, Success false with a one-line reason.
// now is the run clock.
type Client interface {
	Do(ctx context.Context, req *Request, rec *metrics.Record, now func() time.Duration)
}

// ErrInterrupted is the failure reason of a request cut short by the end of the run
// (Ctrl-C); such requests are left out of the results.
const ErrInterrupted = "interrupted"

// Sampling holds the optional sampling parameters of vllm bench serve; nil = the
// server's default.
type Sampling struct {
	Temperature *float64
	TopP        *float64
	TopK        *int
}

// Generator is what the in-process backend drives; *engine.Engine satisfies it.
type Generator interface {
	Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error)
}

// InProc is the client of an in-process engine: no HTTP, one token per chunk.
type InProc struct {
	Gen       Generator
	Sampling  Sampling
	IgnoreEOS bool
}

// Do implements Client.
func (c *InProc) Do(ctx context.Context, req *Request, rec *metrics.Record, now func() time.Duration) {
	p := sample.Params{}
	if s := c.Sampling; s.Temperature != nil || s.TopK != nil || s.TopP != nil {
		if s.Temperature != nil {
			p.Temperature = float32(*s.Temperature)
		}
		if s.TopK != nil {
			p.TopK = *s.TopK
		}
		if s.TopP != nil {
			p.TopP = float32(*s.TopP)
		}
		p.Seed = uint64(rec.Index)
	}
	er := engine.Request{Prompt: req.Prompt, Tokens: req.Tokens, MaxTokens: req.OutputLen, Sampling: p, IgnoreEOS: c.IgnoreEOS}
	var text []byte
	var times inprocTimes // tokens timed when the engine emitted them
	times.start(rec, now)
	st, err := c.Gen.Generate(ctx, er, func(t engine.Token) error {
		times.token(t)
		text = append(text, t.Text...)
		return nil
	})
	times.finish()
	rec.Text = string(text)
	rec.OutputTokens = st.GenTokens
	switch {
	case err != nil:
		rec.Error = failReason(ctx, ctx, err, 0)
	case st.GenTokens == 0:
		rec.Error = "no tokens: stop " + st.StopReason
	default:
		rec.Success = true
	}
}

// HTTP is the client of an HTTP server: backend openai (/v1/completions), openai-chat
// (/v1/chat/completions), tgi (/generate_stream) or llamacpp (/completion).
type HTTP struct {
	Backend   string
	URL       string // base URL + endpoint
	Model     string
	Headers   map[string]string // sent with every request (API key included)
	Sampling  Sampling
	IgnoreEOS bool
	Tok       Tokenizer // counts output tokens when the server reports none
	HC        *http.Client
	Timeout   time.Duration // per request; 0 = none
}

// DefaultEndpoint returns the endpoint a backend uses when --endpoint is not given.
func DefaultEndpoint(backend string) string {
	switch backend {
	case "openai-chat":
		return "/v1/chat/completions"
	case "tgi":
		return "/generate_stream"
	case "llamacpp":
		return "/completion"
	}
	return "/v1/completions"
}

// NewTransport returns the shared keep-alive transport for a run with up to conns
// concurrent streams.
func NewTransport(conns int) *http.Transport {
	conns = max(conns, 16)
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		WriteBufferSize:     16 << 10,
		ReadBufferSize:      32 << 10,
	}
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

func (c *HTTP) body(req *Request) ([]byte, error) {
	b := map[string]any{}
	set := func(m map[string]any) {
		if s := c.Sampling; s.Temperature != nil {
			m["temperature"] = *s.Temperature
		}
		if s := c.Sampling; s.TopP != nil {
			m["top_p"] = *s.TopP
		}
		if s := c.Sampling; s.TopK != nil {
			m["top_k"] = *s.TopK
		}
	}
	switch c.Backend {
	case "openai", "openai-chat":
		b["model"] = c.Model
		b["stream"] = true
		b["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
		if c.Backend == "openai" {
			b["prompt"] = req.Prompt
			b["max_tokens"] = req.OutputLen
		} else {
			b["messages"] = []map[string]string{{"role": "user", "content": req.Prompt}}
			b["max_completion_tokens"] = req.OutputLen
		}
		if c.IgnoreEOS {
			b["ignore_eos"] = true
		}
		set(b)
	case "tgi":
		params := map[string]any{"max_new_tokens": req.OutputLen, "details": true}
		if c.Sampling.Temperature != nil && *c.Sampling.Temperature > 0 {
			params["do_sample"] = true
		}
		set(params)
		b["inputs"] = req.Prompt
		b["parameters"] = params
	case "llamacpp":
		b["prompt"] = req.Prompt
		b["n_predict"] = req.OutputLen
		b["stream"] = true
		if c.IgnoreEOS {
			b["ignore_eos"] = true
		}
		set(b)
	default:
		return nil, fmt.Errorf("unknown backend %q", c.Backend)
	}
	return json.Marshal(b)
}

// Do implements Client.
func (c *HTTP) Do(ctx context.Context, req *Request, rec *metrics.Record, now func() time.Duration) {
	body, err := c.body(req)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	run := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		rec.Error = "request: " + err.Error()
		return
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	for k, v := range c.Headers {
		hr.Header.Set(k, v)
	}
	rec.Start = now()
	resp, err := c.HC.Do(hr)
	if err != nil {
		rec.Error = failReason(run, ctx, err, c.Timeout)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		rec.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(strings.ToValidUTF8(string(msg), "?")))
		return
	}
	br := readers.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() { br.Reset(nil); readers.Put(br) }()
	c.stream(run, ctx, &sseReader{br: br}, rec, now)
}

// stream reads the event stream into rec.
func (c *HTTP) stream(run, ctx context.Context, sr *sseReader, rec *metrics.Record, now func() time.Duration) {
	var (
		text                    []byte
		first, done, contCounts = false, false, true
		last                    time.Duration
		chunks, usage, prevCum  = 0, -1, 0
		kinds                   []int32
		llamaTimings            map[string]float64
	)
	chunk := func(at time.Duration, t []byte, cum int) {
		if !first {
			first = true
			rec.TTFT = at - rec.Start
		} else {
			rec.ITL = append(rec.ITL, at-last)
		}
		if len(t) > 0 && rec.TTFTContent == 0 {
			rec.TTFTContent = at - rec.Start
		}
		last = at
		chunks++
		text = appendUnescaped(text, t)
		if cum >= 0 {
			if chunks > 1 {
				kinds = append(kinds, int32(cum-prevCum))
			}
			prevCum = cum
		} else {
			contCounts = false
		}
	}
	var err error
	for !done {
		var p []byte
		p, err = sr.next()
		if err != nil {
			break
		}
		at := now()
		if c.Backend == "openai" || c.Backend == "openai-chat" {
			if bytes.Equal(bytes.TrimSpace(p), []byte("[DONE]")) {
				done = true
				break
			}
		}
		if !jsonObject(p) {
			err = &malformedError{line: "data: " + string(truncate(p, 72))}
			break
		}
		if at := jsonKey(p, "error"); at >= 0 && !jsonIsNull(p, at) {
			msg := p[at:]
			if raw, ok := jsonString(p, jsonKey(p, "message")); ok {
				msg = raw
			}
			err = fmt.Errorf("server error: %s", truncate(msg, 160))
			break
		}
		switch c.Backend {
		case "openai", "openai-chat":
			ck := jsonKey(p, "choices")
			cum := -1
			if u := jsonKey(p, "usage"); u >= 0 && !jsonIsNull(p, u) {
				if n, ok := jsonInt(p, jsonKey(p[u:], "completion_tokens")+u); ok {
					cum = n
				}
			}
			if jsonNonEmptyArray(p, ck) {
				key := "text"
				if c.Backend == "openai-chat" {
					key = "content"
				}
				t, _ := jsonString(p, jsonKey(p[ck:], key)+ck)
				chunk(at, t, cum)
			} else if cum >= 0 {
				usage = cum
			}
		case "tgi":
			// {"index":i,"token":{"id","text","logprob","special"},"generated_text":null|"…",
			// "details":null|{"generated_tokens",…}}: one token per event; the last event
			// carries the last token too. Special tokens (EOS) count as tokens but, as in
			// TGI's generated_text, not as text.
			if tk := jsonKey(p, "token"); tk >= 0 && !jsonIsNull(p, tk) {
				var t []byte
				if sp, ok := jsonBool(p, jsonKey(p[tk:], "special")+tk); !ok || !sp {
					t, _ = jsonString(p, jsonKey(p[tk:], "text")+tk)
				}
				chunk(at, t, chunks+1)
			}
			if g := jsonKey(p, "generated_text"); g >= 0 && !jsonIsNull(p, g) {
				done = true
				if n, ok := jsonInt(p, jsonKey(p, "generated_tokens")); ok {
					usage = n
				}
			}
		case "llamacpp":
			// Partial results {"content","tokens","stop":false,"tokens_predicted",…}, then
			// a final one with "stop":true, tokens_predicted and the server's timings.
			stop := jsonTopBool(p, "stop")
			t, _ := jsonString(p, jsonKey(p, "content"))
			cum, ok := jsonInt(p, jsonKey(p, "tokens_predicted"))
			if !ok {
				cum = chunks + 1
			}
			if !stop || len(t) > 0 {
				chunk(at, t, cum)
			}
			if !stop {
				continue
			}
			done = true
			if ok {
				usage = cum
			}
			if tm := jsonKey(p, "timings"); tm >= 0 && !jsonIsNull(p, tm) {
				llamaTimings = map[string]float64{}
				for _, k := range llamaTimingKeys {
					if v, ok := jsonFloat(p, jsonKey(p[tm:], k)+tm); ok {
						llamaTimings["llamacpp_"+k] = v
					}
				}
			}
		}
	}
	rec.Text = string(text)
	rec.Extra = llamaTimings
	if first {
		rec.Latency = last - rec.Start
	}
	if contCounts && chunks > 0 {
		rec.ChunkTokens = kinds
	}
	switch {
	case usage >= 0:
		rec.OutputTokens = usage
	case contCounts && chunks > 0:
		rec.OutputTokens = prevCum
	case c.Tok != nil:
		rec.OutputTokens = len(c.Tok.Encode(rec.Text, false, false))
	default:
		rec.OutputTokens = chunks
	}
	switch {
	case err != nil && err != io.EOF:
		rec.Error = failReason(run, ctx, err, c.Timeout)
	case !done && (c.Backend == "openai" || c.Backend == "openai-chat"):
		rec.Error = "stream ended early: no [DONE]"
	case !done:
		rec.Error = "stream ended early: no final event"
	case chunks == 0:
		rec.Error = "empty stream: no tokens"
	default:
		rec.Success = true
	}
}

// llamaTimingKeys are the fields of llama.cpp server's timings object that a result
// keeps (as llamacpp_<key>); draft_* appear only with speculative decoding.
var llamaTimingKeys = []string{"cache_n", "prompt_n", "prompt_ms", "prompt_per_token_ms", "prompt_per_second",
	"predicted_n", "predicted_ms", "predicted_per_token_ms", "predicted_per_second", "draft_n", "draft_n_accepted"}

// failReason turns a transport error into a one-line "kind: detail" reason. run is the
// run's context and ctx the request's (run plus the request timeout): when the run
// itself has stopped — cancelled, or past a deadline of its own — the request was
// interrupted, not timed out.
func failReason(run, ctx context.Context, err error, timeout time.Duration) string {
	var me *malformedError
	switch {
	case errors.As(err, &me):
		return me.Error()
	case run.Err() != nil:
		return ErrInterrupted
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timeout: no complete response within %v", timeout)
	case ctx.Err() != nil:
		return ErrInterrupted
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection reset"):
		return "stream closed mid-way: " + err.Error()
	}
	var ne net.Error
	if errors.As(err, &ne) || strings.Contains(err.Error(), "dial") {
		return "connection: " + err.Error()
	}
	if strings.HasPrefix(err.Error(), "server error: ") {
		return err.Error()
	}
	return "error: " + err.Error()
}
