package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"llmbench/engine"
	"llmbench/engine/sample"
)

// maxStops bounds the stop strings of one request.
const maxStops = 16

// maxChoices bounds the generations of one request: prompts × n.
const maxChoices = 128

// request is the body of /v1/completions and /v1/chat/completions: OpenAI's fields plus
// vLLM's extensions (top_k, min_p, ignore_eos, repetition_penalty,
// stream_options.continuous_usage_stats). Unknown fields are ignored.
type request struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	TopK                *int            `json:"top_k"`
	MinP                *float64        `json:"min_p"`
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	IgnoreEOS         bool            `json:"ignore_eos"`
	N                 *int            `json:"n"`
	BestOf            *int            `json:"best_of"`
	Echo              bool            `json:"echo"`
	Logprobs          json.RawMessage `json:"logprobs"`     // completions: an integer (top count); chat: a bool
	TopLogprobs       *int            `json:"top_logprobs"` // chat
	FrequencyPenalty  *float64        `json:"frequency_penalty"`
	PresencePenalty   *float64        `json:"presence_penalty"`
	RepetitionPenalty *float64        `json:"repetition_penalty"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// job is a parsed, validated request ready for admission.
type job struct {
	chat                          bool
	req                           engine.Request // the sampling and limits; the prompts are in prompts
	prompts                       []prompt
	n                             int // choices per prompt
	stops                         []string
	stream                        bool
	includeUsage, continuousUsage bool
}

// prompt is one prompt of a request: its text or tokens, its token count (0 when the
// engine tokenizes) and the max_tokens left to it by the context.
type prompt struct {
	text      string
	ids       []int32
	tokens    int
	maxTokens int
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) { s.serve(w, r, false) }
func (s *Server) chat(w http.ResponseWriter, r *http.Request)        { s.serve(w, r, true) }

// errStopString ends a generation whose text reached a stop string.
var errStopString = errors.New("stop string")

// serve runs one request: parse, admit, generate, answer.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, chat bool) {
	arrival := time.Now()
	// Admission first: a full server refuses before reading the body or tokenizing.
	tk, err := s.reserve()
	if err != nil {
		s.m.rejected.Add(1)
		s.logf("%s %s %s: 429 queue full", clientIP(r), r.Method, r.URL.Path)
		// The body is left unread: closing the connection keeps net/http from reading
		// it before the answer goes out.
		w.Header().Set("Connection", "close")
		writeAPIError(w, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "queue_full",
			Message: fmt.Sprintf("server busy: %d requests running and %d waiting (the queue limit); retry later", s.cfg.MaxRunning, s.cfg.MaxQueue)})
		return
	}
	defer tk.release()
	j, aerr := s.parse(w, r, chat)
	if aerr != nil {
		s.logf("%s %s %s: %d %s", clientIP(r), r.Method, r.URL.Path, aerr.Status, aerr.Message)
		writeAPIError(w, aerr)
		return
	}
	ctx := r.Context()
	if s.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	if err := tk.wait(ctx); err != nil {
		s.m.finished("abort", time.Since(arrival), 0, 0, 0)
		if errors.Is(err, context.DeadlineExceeded) {
			writeAPIError(w, &apiError{Status: http.StatusGatewayTimeout, Type: "timeout_error", Code: "timeout", Message: "request timed out waiting in the queue"})
		}
		return
	}
	c := &conn{s: s, w: w, j: j, id: newID(chat), created: arrival.Unix()}
	if j.stream {
		c.open()
	}
	var usage usageBody
	var choices []any
	for i, p := range j.prompts {
		s.m.tokens(p.tokens, 0)
		for k := range j.n {
			req := j.req
			req.Prompt, req.Tokens, req.MaxTokens = p.text, p.ids, p.maxTokens
			req.Sampling.Seed += uint64(k) // the n samples of a prompt differ, reproducibly under a seed
			o := &output{conn: c, index: i*j.n + k, promptTokens: p.tokens, maxTokens: p.maxTokens, arrival: arrival, stop: stopper{stops: j.stops}}
			if j.stream && chat {
				empty := ""
				o.event(o.envelope([]any{chatChoice{Index: o.index, Delta: &chatDelta{Role: "assistant", Content: &empty}}}, o.streamUsage()))
			}
			finish, ok := s.generate(ctx, r, o, req)
			if !ok {
				return
			}
			if k == 0 {
				usage.PromptTokens += o.promptTokens
			}
			usage.CompletionTokens += o.tokens
			if j.stream {
				o.chunk(o.tail, finish)
				continue
			}
			text := o.text.String() + o.tail
			if chat {
				choices = append(choices, chatChoice{Index: o.index, Message: &chatDelta{Role: "assistant", Content: &text}, Logprobs: o.takeLogprobs(), FinishReason: finish})
			} else {
				choices = append(choices, textChoice{Index: o.index, Text: text, Logprobs: o.takeLogprobs(), FinishReason: finish})
			}
		}
	}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	s.logf("%s %s %s: 200 %d+%d tokens, %d choices, %v", clientIP(r), r.Method, r.URL.Path, usage.PromptTokens, usage.CompletionTokens,
		len(j.prompts)*j.n, time.Since(arrival).Round(time.Millisecond))
	if j.stream {
		if j.includeUsage {
			c.event(c.envelope([]any{}, &usage))
		}
		c.done()
		return
	}
	body := c.envelope(choices, &usage)
	if chat {
		body.Object = "chat.completion"
	}
	writeJSON(w, http.StatusOK, body)
}

// generate runs one choice into o and returns its finish reason; when it fails (the
// client left, a timeout, an engine error) it answers the error, if there is still
// someone to tell, and returns false: the request ends there.
func (s *Server) generate(ctx context.Context, r *http.Request, o *output, req engine.Request) (string, bool) {
	st, err := s.cfg.Gen.Generate(ctx, req, o.emit)
	if o.promptTokens == 0 {
		o.promptTokens = st.PromptTokens
		s.m.tokens(st.PromptTokens, 0)
	}
	finish := ""
	switch {
	case errors.Is(err, errStopString):
		finish = "stop"
	case err == nil && st.StopReason == "eos":
		finish = "stop"
	case err == nil:
		finish = "length"
	}
	e2e := time.Since(o.arrival)
	if finish != "" {
		s.m.finished(finish, e2e, o.ttft, st.PromptTime, st.GenTime)
		if !o.stop.hit {
			o.tail += o.stop.flush()
		}
		return finish, true
	}
	// Cancelled, timed out, the client left, or the engine failed.
	reason, aerr := "abort", (*apiError)(nil)
	switch {
	case o.werr != nil || r.Context().Err() != nil:
	case errors.Is(err, context.DeadlineExceeded):
		aerr = &apiError{Status: http.StatusGatewayTimeout, Type: "timeout_error", Code: "timeout", Message: fmt.Sprintf("request timed out after %v", s.cfg.RequestTimeout)}
	case errors.Is(err, engine.ErrContextFull):
		reason, aerr = "error", badRequest("%v", err)
		aerr.Code = "context_length_exceeded"
	default:
		reason, aerr = "error", &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: "generation failed: " + err.Error()}
	}
	s.m.finished(reason, e2e, o.ttft, st.PromptTime, st.GenTime)
	s.logf("%s %s %s: %s after %d tokens: %v", clientIP(r), r.Method, r.URL.Path, reason, o.tokens, err)
	if aerr != nil {
		if o.j.stream {
			o.event(errorBody(aerr.Type, aerr.Code, aerr.Message))
			o.done()
		} else {
			writeAPIError(o.w, aerr)
		}
	}
	return "", false
}

// envelope is the outer object of every answer and chunk, in OpenAI's field order.
type envelope struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []any  `json:"choices"`
	Usage   any    `json:"usage,omitempty"`
}

// textChoice is a choice of /v1/completions.
type textChoice struct {
	Index        int    `json:"index"`
	Text         string `json:"text"`
	Logprobs     any    `json:"logprobs"`
	FinishReason any    `json:"finish_reason"`
}

// chatChoice is a choice of /v1/chat/completions: a message, or a delta when streamed.
type chatChoice struct {
	Index        int        `json:"index"`
	Message      *chatDelta `json:"message,omitempty"`
	Delta        *chatDelta `json:"delta,omitempty"`
	Logprobs     any        `json:"logprobs"`
	FinishReason any        `json:"finish_reason"`
}

type chatDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type usageBody struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// conn carries one request's answer: its stream of chunks or its body.
type conn struct {
	s       *Server
	w       http.ResponseWriter
	rc      *http.ResponseController
	j       *job
	id      string
	created int64
	werr    error // the first write error (the client left)
}

// output is one choice of an answer: its streamed chunks or its collected text.
type output struct {
	*conn
	index        int // the choice's index: prompt × n + sample
	promptTokens int
	maxTokens    int
	arrival      time.Time
	stop         stopper
	text         strings.Builder // the answer so far (non-streamed)
	tail         string          // text held for the final chunk
	held         string          // text of a step's tokens until its last (engine.Token.More)
	final        bool            // the last token has been seen: later text goes to tail
	tokens       int             // generated tokens so far
	ttft         time.Duration   // arrival to the first token (0 until it comes)
	last         time.Time       // when the latest token was emitted
	lps          []logprobEntry  // the tokens' log-probabilities not yet sent (Request.Logprobs)
	offset       int             // text bytes of the tokens so far (completions' text_offset)
}

// emit receives each token from the generator.
func (o *output) emit(t engine.Token) error {
	if o.werr != nil {
		return o.werr
	}
	if t.ID >= 0 {
		o.tokens++
		o.s.m.tokens(0, 1)
		at := t.At
		if at.IsZero() {
			at = time.Now()
		}
		if o.tokens == 1 {
			o.ttft = max(at.Sub(o.arrival), time.Nanosecond)
			o.s.m.firstToken(o.ttft)
		} else {
			o.s.m.vITL.Observe(at.Sub(o.last).Seconds())
		}
		o.last = at
		if o.j.req.Logprobs {
			o.lps = append(o.lps, logprobEntry{tok: t, offset: o.offset})
		}
		o.offset += len(t.Text)
	}
	out, hit := o.stop.push(t.Text)
	if m := o.maxTokens; m > 0 && o.tokens >= m && !hit {
		// The last token: its text goes out with finish_reason in the final chunk,
		// as vLLM does, rather than in a chunk of its own followed by an empty one.
		o.final = true
	}
	if o.held != "" && (hit || o.final || !t.More) {
		out, o.held = o.held+out, "" // the held text of the step comes first
	}
	if hit {
		o.tail += out
		o.final = true
		return errStopString
	}
	switch {
	case o.final:
		o.tail += out
	case !o.j.stream:
		o.text.WriteString(out)
	case t.More: // the step's tokens go out in one chunk, as llama-server streams them
		o.held += out
	case out != "":
		o.chunk(out, "")
	}
	return o.werr
}

// open starts the event stream (each chat choice then begins with a role-only delta).
func (c *conn) open() {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	c.rc = http.NewResponseController(c.w)
	if !c.j.chat {
		c.rc.Flush()
	}
}

// chunk sends text (and, when finish is set, the finish reason).
func (o *output) chunk(text, finish string) {
	var fr any
	if finish != "" {
		fr = finish
	}
	var choice any
	if o.j.chat {
		d := &chatDelta{}
		if text != "" {
			d.Content = &text
		}
		choice = chatChoice{Index: o.index, Delta: d, Logprobs: o.takeLogprobs(), FinishReason: fr}
	} else {
		choice = textChoice{Index: o.index, Text: text, Logprobs: o.takeLogprobs(), FinishReason: fr}
	}
	o.event(o.envelope([]any{choice}, o.streamUsage()))
}

// streamUsage is the usage field of a content chunk: absent, null (include_usage, as
// OpenAI) or the running counts (vLLM's continuous_usage_stats).
func (o *output) streamUsage() any {
	switch {
	case o.j.continuousUsage:
		return &usageBody{PromptTokens: o.promptTokens, CompletionTokens: o.tokens, TotalTokens: o.promptTokens + o.tokens}
	case o.j.includeUsage:
		return json.RawMessage("null")
	}
	return nil
}

func (c *conn) envelope(choices []any, usage any) *envelope {
	obj := "text_completion"
	if c.j.chat {
		obj = "chat.completion.chunk"
	}
	return &envelope{ID: c.id, Object: obj, Created: c.created, Model: c.s.cfg.Model, Choices: choices, Usage: usage}
}

// event writes one server-sent event and flushes it.
func (o *conn) event(v any) {
	if o.werr != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		o.werr = err
		return
	}
	var buf bytes.Buffer
	buf.Grow(len(b) + 8)
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	if _, err := o.w.Write(buf.Bytes()); err != nil {
		o.werr = err
		return
	}
	if err := o.rc.Flush(); err != nil {
		o.werr = err
	}
}

func (o *conn) done() {
	if o.werr != nil {
		return
	}
	if _, err := io.WriteString(o.w, "data: [DONE]\n\n"); err == nil {
		o.rc.Flush()
	}
}

func newID(chat bool) string {
	var b [12]byte
	rand.Read(b[:])
	p := "cmpl-"
	if chat {
		p = "chatcmpl-"
	}
	return fmt.Sprintf("%s%x", p, b)
}

// parse reads and validates a request body.
func (s *Server) parse(w http.ResponseWriter, r *http.Request, chat bool) (*job, *apiError) {
	var q request
	if aerr := s.readJSON(w, r, &q); aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkModel(q.Model); aerr != nil {
		return nil, aerr
	}
	j := &job{chat: chat, stream: q.Stream}
	if q.StreamOptions != nil {
		if !q.Stream {
			return nil, badRequest("stream_options is only allowed when stream is true")
		}
		j.includeUsage = q.StreamOptions.IncludeUsage
		j.continuousUsage = q.StreamOptions.ContinuousUsageStats && q.StreamOptions.IncludeUsage
	}
	j.n = 1
	if q.N != nil {
		if *q.N < 1 || *q.N > maxChoices {
			return nil, badRequest("n = %d: must be in [1, %d]", *q.N, maxChoices)
		}
		j.n = *q.N
	}
	switch {
	case q.BestOf != nil && *q.BestOf != 1:
		return nil, badRequest("best_of = %d: only 1 is supported", *q.BestOf)
	case q.Echo:
		return nil, badRequest("echo is not supported")
	}
	if aerr := parseLogprobs(&q, chat, &j.req); aerr != nil {
		return nil, aerr
	}

	// The prompt.
	if chat {
		if q.Prompt != nil {
			return nil, badRequest("chat completions take messages, not prompt")
		}
		text, aerr := s.renderChat(q.Messages)
		if aerr != nil {
			return nil, aerr
		}
		j.prompts = []prompt{{text: text}}
	} else {
		if q.Messages != nil {
			return nil, badRequest("completions take prompt, not messages (use /v1/chat/completions)")
		}
		ps, aerr := parsePrompt(q.Prompt)
		if aerr != nil {
			return nil, aerr
		}
		j.prompts = ps
	}
	if len(j.prompts)*j.n > maxChoices {
		return nil, badRequest("%d prompts × n = %d: at most %d choices in one request", len(j.prompts), j.n, maxChoices)
	}
	for i := range j.prompts {
		if aerr := s.tokenizePrompt(&j.prompts[i], len(j.prompts) > 1, i); aerr != nil {
			return nil, aerr
		}
	}

	// Length, stop strings, sampling.
	mt := q.MaxTokens
	if chat && q.MaxCompletionTokens != nil {
		mt = q.MaxCompletionTokens
	}
	switch {
	case mt != nil && *mt < 1:
		return nil, badRequest("max_tokens = %d: must be at least 1", *mt)
	case mt != nil:
		j.req.MaxTokens = *mt
	case !chat:
		j.req.MaxTokens = 16 // OpenAI's default for completions
	}
	for i := range j.prompts {
		p := &j.prompts[i]
		p.maxTokens = j.req.MaxTokens
		if room := s.cfg.Context - p.tokens; s.cfg.Context > 0 && p.maxTokens > room {
			// More than the context leaves (up to 2^63-1): clamped, so generation ends at the
			// context with finish_reason "length", as it would have anyway.
			p.maxTokens = room
		}
	}
	stops, aerr := parseStop(q.Stop)
	if aerr != nil {
		return nil, aerr
	}
	j.stops = stops
	j.req.IgnoreEOS = q.IgnoreEOS
	p, aerr := sampling(&q)
	if aerr != nil {
		return nil, aerr
	}
	j.req.Sampling = p
	return j, nil
}

// readJSON reads a request body, within the body limit and timeout, into v.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) *apiError {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	rc.SetReadDeadline(time.Time{}) // a stream may outlive any read deadline
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
				Message: fmt.Sprintf("request body larger than the limit of %d bytes", mbe.Limit)}
		}
		return badRequest("reading the request body: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return badRequest("malformed JSON body: %v", err)
	}
	return nil
}

// checkModel refuses a model name other than the served one (empty: the served one).
func (s *Server) checkModel(name string) *apiError {
	if name != "" && name != s.cfg.Model {
		return modelNotFound(name, s.cfg.Model)
	}
	return nil
}

func modelNotFound(name, served string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist; this server serves %q", name, served)}
}

func isNone(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "null", "false", "0":
		return true
	}
	return false
}

// parsePrompt accepts OpenAI's four shapes of prompt: a string, a list of strings, a
// list of token ids or a list of lists of token ids (one choice, or n, per prompt).
func parsePrompt(raw json.RawMessage) ([]prompt, *apiError) {
	if len(raw) == 0 || isNone(raw) {
		return nil, badRequest("prompt is required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []prompt{{text: text}}, nil
	}
	var out []prompt
	var texts []string
	var ids []int32
	var lists [][]int32
	switch {
	case json.Unmarshal(raw, &texts) == nil:
		for _, t := range texts {
			out = append(out, prompt{text: t})
		}
	case json.Unmarshal(raw, &ids) == nil:
		out = []prompt{{ids: ids}}
		if ids == nil {
			out[0].ids = []int32{}
		}
	case json.Unmarshal(raw, &lists) == nil:
		for _, l := range lists {
			out = append(out, prompt{ids: append([]int32{}, l...)})
		}
	default:
		return nil, badRequest("prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids")
	}
	if len(out) == 0 {
		return nil, badRequest("prompt: an empty list")
	}
	return out, nil
}

// tokenizePrompt checks a prompt's token ids, or tokenizes its text when the server
// has a tokenizer, and checks that it fits in the context. many: name the prompt's
// index i in errors.
func (s *Server) tokenizePrompt(p *prompt, many bool, i int) *apiError {
	name := "prompt"
	if many {
		name = fmt.Sprintf("prompt[%d]", i)
	}
	if p.ids != nil {
		if len(p.ids) == 0 {
			return badRequest("%s: empty token list", name)
		}
		if s.cfg.Tok == nil {
			return badRequest("%s: token ids are not supported by this server", name)
		}
		for _, id := range p.ids {
			if id < 0 || int(id) >= s.cfg.Tok.VocabSize() {
				return badRequest("%s: token id %d outside the vocabulary of %d", name, id, s.cfg.Tok.VocabSize())
			}
		}
	} else if s.cfg.Tok != nil {
		p.ids = s.cfg.Tok.Encode(p.text, true, true)
	}
	p.tokens = len(p.ids)
	if s.cfg.Context > 0 && p.tokens >= s.cfg.Context {
		e := badRequest("this model's maximum context length is %d tokens; %s has %d", s.cfg.Context, name, p.tokens)
		e.Code = "context_length_exceeded"
		return e
	}
	return nil
}

func parseStop(raw json.RawMessage) ([]string, *apiError) {
	if len(raw) == 0 || isNone(raw) {
		return nil, nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return nil, badRequest("stop must be a string or a list of strings")
	}
	if len(list) > maxStops {
		return nil, badRequest("stop: %d strings; at most %d", len(list), maxStops)
	}
	var out []string
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// renderChat checks the messages and renders them with the chat template.
func (s *Server) renderChat(in []chatMessage) (string, *apiError) {
	if len(in) == 0 {
		return "", badRequest("messages: at least one message is required")
	}
	msgs := make([]Message, len(in))
	for i, m := range in {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		var text string
		switch {
		case len(m.Content) == 0 || isNone(m.Content):
		case json.Unmarshal(m.Content, &text) == nil:
		default:
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return "", badRequest("messages[%d].content must be a string or a list of text parts", i)
			}
			for _, p := range parts {
				if p.Type != "text" {
					return "", badRequest("messages[%d].content: part type %q is not supported (text only)", i, p.Type)
				}
				text += p.Text
			}
		}
		msgs[i] = Message{Role: role, Content: text}
	}
	out, err := s.cfg.Template.Render(msgs)
	if err != nil {
		return "", badRequest("messages: %v", err)
	}
	return out, nil
}

// sampling maps OpenAI's sampling fields onto sample.Params. OpenAI's defaults apply:
// temperature 1, top_p 1, no top-k or min-p; an absent seed draws a random one.
func sampling(q *request) (sample.Params, *apiError) {
	p := sample.Params{Temperature: 1}
	if v := q.Temperature; v != nil {
		if *v < 0 {
			return p, badRequest("temperature = %g: must be ≥ 0", *v)
		}
		p.Temperature = float32(*v)
	}
	if v := q.TopP; v != nil {
		if *v <= 0 || *v > 1 {
			return p, badRequest("top_p = %g: must be in (0, 1]", *v)
		}
		p.TopP = float32(*v)
	}
	if v := q.TopK; v != nil {
		if *v < -1 {
			return p, badRequest("top_k = %d: must be -1 (off), 0 (off) or positive", *v)
		}
		p.TopK = max(*v, 0)
	}
	if v := q.MinP; v != nil {
		if *v < 0 || *v > 1 {
			return p, badRequest("min_p = %g: must be in [0, 1]", *v)
		}
		p.MinP = float32(*v)
	}
	pen := false
	if v := q.FrequencyPenalty; v != nil {
		if *v < -2 || *v > 2 {
			return p, badRequest("frequency_penalty = %g: must be in [-2, 2]", *v)
		}
		p.FrequencyPenalty, pen = float32(*v), true
	}
	if v := q.PresencePenalty; v != nil {
		if *v < -2 || *v > 2 {
			return p, badRequest("presence_penalty = %g: must be in [-2, 2]", *v)
		}
		p.PresencePenalty, pen = float32(*v), true
	}
	if v := q.RepetitionPenalty; v != nil {
		if *v <= 0 {
			return p, badRequest("repetition_penalty = %g: must be > 0", *v)
		}
		p.RepeatPenalty, pen = float32(*v), true
	}
	if pen {
		p.RepeatLastN = 64 // llama.cpp server's default penalty window
	}
	if q.Seed != nil {
		p.Seed = uint64(*q.Seed)
	} else {
		var b [8]byte
		rand.Read(b[:])
		p.Seed = binary.LittleEndian.Uint64(b[:])
	}
	if err := p.Validate(); err != nil {
		return p, badRequest("sampling: %v", err)
	}
	return p, nil
}
