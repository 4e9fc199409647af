package serving

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"llmbench/engine"
	"llmbench/engine/sample"
	"llmbench/workloads/metrics"
)

// Client sends one request and fills its record: Start (just before sending), the
// chunk times, output tokens and, on failure, Success false with a typed Reason and a
// one-line detail (metrics.Record.Fail). A request cut short because ctx ended is
// metrics.ReasonInterrupted; one past the client's own timeout is ReasonTimeout.
// now is the run clock.
type Client interface {
	Do(ctx context.Context, req *Request, rec *metrics.Record, now func() time.Duration)
}

// Sampling holds the sampling parameters of vllm bench serve. A nil Temperature
// means 0 (greedy), which every backend sends explicitly, as vllm bench serve does;
// nil TopP and TopK leave the server's defaults.
type Sampling struct {
	Temperature *float64
	TopP        *float64
	TopK        *int
	// MinP, the penalties and Logprobs are sent when set (vllm bench serve's
	// --min-p, --frequency-penalty, --presence-penalty, --repetition-penalty,
	// --logprobs), under each backend's names.
	MinP, FrequencyPenalty, PresencePenalty, RepetitionPenalty *float64
	Logprobs                                                   *int
}

// Temp returns the temperature requests carry: the given one, else 0 (greedy).
func (s Sampling) Temp() float64 {
	if s.Temperature != nil {
		return *s.Temperature
	}
	return 0
}

// withTimeout returns the request's context: run bounded by timeout when it is > 0.
func withTimeout(run context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(run, timeout)
	}
	return context.WithCancel(run)
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
	// Timeout bounds each request (--request-timeout); 0 = none. A request past it
	// fails with metrics.ReasonTimeout.
	Timeout time.Duration
	// KeepText keeps each request's generated text in its record (--save-detailed).
	KeepText bool
	// NonStreaming delivers each answer whole, when the engine has finished it
	// (--non-streaming): one chunk at the end, so only E2EL is measured.
	NonStreaming bool
}

// Do implements Client.
func (c *InProc) Do(run context.Context, req *Request, rec *metrics.Record, now func() time.Duration) {
	ctx, cancel := withTimeout(run, c.Timeout)
	defer cancel()
	p := sample.Params{Temperature: float32(c.Sampling.Temp())}
	if s := c.Sampling; s.Temperature != nil || s.TopK != nil || s.TopP != nil {
		if s.TopK != nil {
			p.TopK = *s.TopK
		}
		if s.TopP != nil {
			p.TopP = float32(*s.TopP)
		}
		p.Seed = uint64(rec.Index)
	}
	s := c.Sampling
	f32 := func(v *float64) float32 {
		if v == nil {
			return 0
		}
		return float32(*v)
	}
	p.MinP, p.RepeatPenalty, p.FrequencyPenalty, p.PresencePenalty = f32(s.MinP), f32(s.RepetitionPenalty), f32(s.FrequencyPenalty), f32(s.PresencePenalty)
	if s.RepetitionPenalty != nil || s.FrequencyPenalty != nil || s.PresencePenalty != nil {
		p.RepeatLastN = -1 // the whole history, as vLLM's penalties
	}
	er := engine.Request{Prompt: req.Prompt, Tokens: req.Tokens, MaxTokens: req.OutputLen, Sampling: p, IgnoreEOS: c.IgnoreEOS}
	if s.Logprobs != nil {
		er.Logprobs, er.TopLogprobs = true, *s.Logprobs
	}
	var text []byte
	var times inprocTimes // tokens timed when the engine emitted them
	times.start(rec, now)
	st, err := c.Gen.Generate(ctx, er, func(t engine.Token) error {
		if !c.NonStreaming {
			times.token(t)
		}
		if c.KeepText {
			text = append(text, t.Text...)
		}
		return nil
	})
	if c.NonStreaming { // the whole answer leaves now, in one piece
		rec.NonStreaming, rec.Latency = true, now()-rec.Start
		rec.Stream.Tokens(rec.Start+rec.Latency, st.GenTokens)
	} else {
		times.finish()
	}
	if c.KeepText {
		rec.Text = string(text)
	}
	rec.OutputTokens = st.GenTokens
	switch {
	case err != nil:
		reason, detail := failReason(run, ctx, err, c.Timeout)
		if reason == metrics.ReasonOther {
			reason = metrics.ReasonRequest // the engine refused it (context full, bad sampling)
		}
		rec.Fail(reason, detail)
	case st.GenTokens == 0:
		rec.Fail(metrics.ReasonIncomplete, "no tokens: stop "+st.StopReason)
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
	// KeepText keeps each request's generated text in its record (--save-detailed);
	// otherwise it is dropped once the tokens are counted.
	KeepText bool
	// ExtraBody holds members added to every request body, replacing those of the same
	// name (--extra-body).
	ExtraBody map[string]json.RawMessage
	// RequestIDPrefix, when set, sends the header x-request-id: prefix + the request's
	// index, as vllm bench serve does.
	RequestIDPrefix string
	// NonStreaming asks for each answer whole (--non-streaming): "stream": false
	// (openai, openai-chat, llamacpp; TGI's /generate, see Endpoint). Only E2EL is
	// measured: send until the full response is read.
	NonStreaming bool
}

// Endpoint returns the endpoint a backend uses when --endpoint is not given, for
// streaming or, with nonStreaming, for whole answers (TGI's /generate).
func Endpoint(backend string, nonStreaming bool) string {
	if nonStreaming && backend == "tgi" {
		return "/generate"
	}
	return DefaultEndpoint(backend)
}

// DefaultEndpoint returns the streaming endpoint a backend uses when --endpoint is
// not given.
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

// InsecureTLS makes tr accept any TLS certificate (vllm bench serve's --insecure, for
// servers with self-signed certificates).
func InsecureTLS(tr *http.Transport) {
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
}

// readers are the SSE line readers, reused across requests: 8 KiB holds a typical chunk
// line (longer ones are assembled in sseReader.long), so a first wave of hundreds of
// streams allocates little.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}

// body builds the JSON request body by appending (no map, no reflection: a burst of
// hundreds of requests builds its bodies in a few microseconds each, off the server's
// cores).
func (c *HTTP) body(req *Request) ([]byte, error) {
	s := c.Sampling
	temp := s.Temp()
	if (s.TopP != nil && !finite(*s.TopP)) || !finite(temp) {
		return nil, fmt.Errorf("sampling: temperature %v, top_p %v: want finite numbers", temp, s.TopP)
	}
	for _, p := range []*float64{s.MinP, s.FrequencyPenalty, s.PresencePenalty, s.RepetitionPenalty} {
		if p != nil && !finite(*p) {
			return nil, fmt.Errorf("sampling: %v is not a finite number", *p)
		}
	}
	// optional appends ,"name":v for each set parameter.
	optional := func(b []byte, names ...string) []byte {
		vals := []*float64{s.MinP, s.FrequencyPenalty, s.PresencePenalty, s.RepetitionPenalty}
		for i, n := range names {
			if n != "" && vals[i] != nil {
				b = strconv.AppendFloat(append(b, `,"`+n+`":`...), *vals[i], 'g', -1, 64)
			}
		}
		return b
	}
	b := make([]byte, 0, 160+len(req.Prompt)+len(c.Model))
	sampling := func(b []byte, withTemp bool) []byte {
		if withTemp {
			b = strconv.AppendFloat(append(b, `,"temperature":`...), temp, 'g', -1, 64)
		}
		if s.TopP != nil {
			b = strconv.AppendFloat(append(b, `,"top_p":`...), *s.TopP, 'g', -1, 64)
		}
		if s.TopK != nil {
			b = strconv.AppendInt(append(b, `,"top_k":`...), int64(*s.TopK), 10)
		}
		return b
	}
	switch c.Backend {
	case "openai", "openai-chat":
		b = appendJSONString(append(b, `{"model":`...), c.Model)
		if c.NonStreaming {
			b = append(b, `,"stream":false`...) // the usage comes with the answer
		} else {
			b = append(b, `,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`...)
		}
		if c.Backend == "openai" {
			b = appendJSONString(append(b, `,"prompt":`...), req.Prompt)
			b = strconv.AppendInt(append(b, `,"max_tokens":`...), int64(req.OutputLen), 10)
		} else {
			b = appendJSONString(append(b, `,"messages":[{"role":"user","content":`...), req.Prompt)
			b = strconv.AppendInt(append(b, `}],"max_completion_tokens":`...), int64(req.OutputLen), 10)
		}
		if c.IgnoreEOS {
			b = append(b, `,"ignore_eos":true`...)
		}
		b = sampling(b, true)
		b = optional(b, "min_p", "frequency_penalty", "presence_penalty", "repetition_penalty")
		if s.Logprobs != nil {
			if c.Backend == "openai" {
				b = strconv.AppendInt(append(b, `,"logprobs":`...), int64(*s.Logprobs), 10)
			} else {
				b = strconv.AppendInt(append(b, `,"logprobs":true,"top_logprobs":`...), int64(*s.Logprobs), 10)
			}
		}
	case "tgi":
		b = appendJSONString(append(b, `{"inputs":`...), req.Prompt)
		b = strconv.AppendInt(append(b, `,"parameters":{"max_new_tokens":`...), int64(req.OutputLen), 10)
		b = append(b, `,"details":true`...)
		if temp > 0 {
			b = append(b, `,"do_sample":true`...)
		}
		b = optional(sampling(b, temp > 0), "", "frequency_penalty", "", "repetition_penalty")
		if s.Logprobs != nil && *s.Logprobs > 0 {
			b = strconv.AppendInt(append(b, `,"top_n_tokens":`...), int64(*s.Logprobs), 10)
		}
		b = append(b, '}') // TGI refuses temperature 0: greedy is do_sample false, its default
	case "llamacpp":
		b = appendJSONString(append(b, `{"prompt":`...), req.Prompt)
		b = strconv.AppendInt(append(b, `,"n_predict":`...), int64(req.OutputLen), 10)
		b = strconv.AppendBool(append(b, `,"stream":`...), !c.NonStreaming)
		if c.IgnoreEOS {
			b = append(b, `,"ignore_eos":true`...)
		}
		b = sampling(b, true)
		b = optional(b, "min_p", "frequency_penalty", "presence_penalty", "repeat_penalty")
		if s.Logprobs != nil {
			b = strconv.AppendInt(append(b, `,"n_probs":`...), int64(*s.Logprobs), 10)
		}
	default:
		return nil, fmt.Errorf("unknown backend %q", c.Backend)
	}
	b = append(b, '}')
	if len(c.ExtraBody) > 0 {
		return mergeBody(b, c.ExtraBody)
	}
	return b, nil
}

// mergeBody adds extra's members to the JSON object body, replacing those of the same
// name, as vllm bench serve's payload.update(extra_body).
func mergeBody(body []byte, extra map[string]json.RawMessage) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("extra body: %w", err)
	}
	for k, v := range extra {
		m[k] = v
	}
	return json.Marshal(m)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// appendJSONString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD (as encoding/json does).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// Do implements Client.
func (c *HTTP) Do(run context.Context, req *Request, rec *metrics.Record, now func() time.Duration) {
	body, err := c.body(req)
	if err != nil {
		rec.Fail(metrics.ReasonRequest, "request: "+err.Error())
		return
	}
	ctx, cancel := withTimeout(run, c.Timeout)
	defer cancel()
	// The connection a request gets, measured apart from TTFT (which holds it, as
	// vLLM's does): set-up time when it had to open one.
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !info.Reused {
			rec.NewConn, rec.Connect = true, now()-rec.Start
		}
	}}
	hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		rec.Fail(metrics.ReasonRequest, "request: "+err.Error())
		return
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.NonStreaming {
		hr.Header.Set("Accept", "application/json")
	} else {
		hr.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range c.Headers {
		hr.Header.Set(k, v)
	}
	if c.RequestIDPrefix != "" {
		hr.Header.Set("x-request-id", c.RequestIDPrefix+strconv.Itoa(rec.Index))
	}
	rec.Start = now()
	resp, err := c.HC.Do(hr)
	if err != nil {
		rec.Fail(failReason(run, ctx, err, c.Timeout))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		rec.Fail(metrics.ReasonHTTP, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(strings.ToValidUTF8(string(msg), "?"))))
		rec.Status = resp.StatusCode
		return
	}
	if c.NonStreaming {
		c.whole(run, ctx, resp.Body, rec, now)
		return
	}
	br := readers.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() { br.Reset(nil); readers.Put(br) }()
	c.stream(run, ctx, &sseReader{br: br}, rec, now)
}

// WarmConnections opens up to n keep-alive connections to the server and leaves them
// idle in the client's transport, so that a run that starts right after sends its
// first wave on open connections (--warm-connections): n cheap GET requests to the
// endpoint (any answer, 405 included, keeps the connection), each holding its
// connection until all n have one, so that they are n distinct connections, then
// waiting until the transport has put it back idle. It returns how many went back
// idle (fewer when the server closes them, or when the wait for all n passes 10 s).
// The transport must keep n idle connections per host (NewTransport(n) does).
func (c *HTTP) WarmConnections(ctx context.Context, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var got atomic.Int64
	all := make(chan struct{})
	arrive := func(arrived *bool) { // once per request: it holds a connection, or never will
		if !*arrived {
			*arrived = true
			if got.Add(1) == int64(n) {
				close(all)
			}
		}
	}
	var kept atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arrived := false
			defer arrive(&arrived)
			idle := make(chan error, 1)
			trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
				arrive(&arrived)
				select { // hold the connection until every request has one
				case <-all:
				case <-ctx.Done():
				}
			}, PutIdleConn: func(err error) {
				select {
				case idle <- err:
				default:
				}
			}}
			hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, c.URL, nil)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			for k, v := range c.Headers {
				hr.Header.Set(k, v)
			}
			resp, err := c.HC.Do(hr)
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drained: the connection goes back idle
			resp.Body.Close()
			select { // the transport returns it from its read loop: wait, so the run finds it idle
			case err := <-idle:
				if err == nil {
					kept.Add(1)
				}
			case <-time.After(100 * time.Millisecond): // not kept (the server closed it)
			case <-ctx.Done():
			}
		}()
	}
	wg.Wait()
	if kept.Load() == 0 && firstErr != nil {
		return 0, fmt.Errorf("warm connections: %w", firstErr)
	}
	return int(kept.Load()), nil
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
		tokens := 1 // a chunk without counts is one token until the request ends
		if cum >= 0 {
			tokens = cum - prevCum
		}
		rec.Stream.Tokens(at, tokens)
		if c.KeepText || c.Tok != nil { // the text is needed to keep or to count
			text = appendUnescaped(text, t)
		}
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
			err = &serverError{msg: string(truncate(msg, 160))}
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
			}
			if cum >= 0 {
				// As vLLM's client: usage.completion_tokens wherever it appears (llama-server
				// sends it in its last chunk with choices; vLLM in a chunk of its own).
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
		rec.OutputTokens = len(c.Tok.Encode(string(text), false, false))
		rec.Retokenized = true
	default:
		rec.OutputTokens = chunks
	}
	if c.KeepText {
		rec.Text = string(text)
	}
	switch {
	case err != nil && err != io.EOF:
		rec.Fail(failReason(run, ctx, err, c.Timeout))
	case !done && (c.Backend == "openai" || c.Backend == "openai-chat"):
		rec.Fail(metrics.ReasonIncomplete, "stream ended early: no [DONE]")
	case !done:
		rec.Fail(metrics.ReasonIncomplete, "stream ended early: no final event")
	case chunks == 0:
		rec.Fail(metrics.ReasonIncomplete, "empty stream: no tokens")
	default:
		rec.Success = true
	}
}

// serverError is an error object the server sent inside the stream.
type serverError struct{ msg string }

func (e *serverError) Error() string { return "server error: " + e.msg }

// llamaTimingKeys are the fields of llama.cpp server's timings object that a result
// keeps (as llamacpp_<key>); draft_* appear only with speculative decoding.
var llamaTimingKeys = []string{"cache_n", "prompt_n", "prompt_ms", "prompt_per_token_ms", "prompt_per_second",
	"predicted_n", "predicted_ms", "predicted_per_token_ms", "predicted_per_second", "draft_n", "draft_n_accepted"}

// failReason classifies a request's error as a typed reason with a one-line detail.
// run is the run's context and ctx the request's (run plus the request timeout): when
// the run itself has stopped — cancelled, or past a deadline of its own — the request
// was interrupted; when only the request's own deadline passed, it timed out (a
// failure).
func failReason(run, ctx context.Context, err error, timeout time.Duration) (metrics.Reason, string) {
	var me *malformedError
	var se *serverError
	switch {
	case errors.As(err, &me):
		return metrics.ReasonMalformed, me.Error()
	case errors.As(err, &se):
		return metrics.ReasonServerError, se.Error()
	case run.Err() != nil:
		return metrics.ReasonInterrupted, "interrupted: the run stopped"
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return metrics.ReasonTimeout, fmt.Sprintf("timeout: no complete response within %v", timeout)
	case ctx.Err() != nil:
		return metrics.ReasonInterrupted, "interrupted: " + ctx.Err().Error()
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return metrics.ReasonStreamClosed, "stream closed mid-way: " + err.Error()
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return metrics.ReasonConnection, "connection: " + err.Error()
	}
	return metrics.ReasonOther, "error: " + err.Error()
}
