package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"llmbench/engine"
	"llmbench/engine/builtin"
)

var (
	builtinOnce sync.Once
	builtinEng  *engine.Engine
	builtinErr  error
)

// builtinEngine loads the built-in stories260K once for the package's tests.
func builtinEngine(t *testing.T) *engine.Engine {
	t.Helper()
	builtinOnce.Do(func() {
		builtinEng, builtinErr = engine.LoadBytes(context.Background(), builtin.Name, builtin.Stories260K, engine.Options{Threads: 2})
	})
	if builtinErr != nil {
		t.Fatal(builtinErr)
	}
	return builtinEng
}

// newServer starts an httptest server; cfg.Gen defaults to the built-in engine.
func newServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.Gen == nil {
		e := builtinEngine(t)
		cfg.Gen, cfg.Tok, cfg.Context = e, e.Tok, e.Options().Context
	}
	if cfg.Model == "" {
		cfg.Model = "stories260K"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return s, hs
}

func post(t *testing.T, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// answer is the union of the fields the tests read from answers and chunks.
type answer struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int     `json:"index"`
		Text    *string `json:"text"`
		Message *struct {
			Role, Content string
		} `json:"message"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func decode(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	var a answer
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("HTTP %d: body %q: %v", resp.StatusCode, b, err)
	}
	return a
}

// events reads a whole SSE body: the JSON events, checking the framing and [DONE].
func events(t *testing.T, resp *http.Response) (evs []answer, raw []string) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasSuffix(s, "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with data: [DONE]: %q", s)
	}
	parts := strings.Split(strings.TrimSuffix(s, "data: [DONE]\n\n"), "\n\n")
	for _, p := range parts[:len(parts)-1] {
		if !strings.HasPrefix(p, "data: {") || strings.Contains(p, "\n") {
			t.Fatalf("bad event %q", p)
		}
		var a answer
		if err := json.Unmarshal([]byte(p[6:]), &a); err != nil {
			t.Fatalf("event %q: %v", p, err)
		}
		evs, raw = append(evs, a), append(raw, p[6:])
	}
	if parts[len(parts)-1] != "" {
		t.Fatalf("trailing bytes %q", parts[len(parts)-1])
	}
	return evs, raw
}

// greedy is what engine.Generate gives for prompt, greedily, up to n tokens.
func greedy(t *testing.T, prompt string, n int) string {
	t.Helper()
	var b strings.Builder
	_, err := builtinEngine(t).Generate(context.Background(), engine.Request{Prompt: prompt, MaxTokens: n}, func(tk engine.Token) error {
		b.WriteString(tk.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCompletionsMatchEngine(t *testing.T) {
	_, hs := newServer(t, Config{})
	want := greedy(t, "Once upon a time", 24)
	nPrompt := len(builtinEngine(t).Tok.Encode("Once upon a time", true, true))

	a := decode(t, post(t, hs.URL+"/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","max_tokens":24,"temperature":0}`))
	if a.Object != "text_completion" || len(a.Choices) != 1 || *a.Choices[0].Text != want || *a.Choices[0].FinishReason != "length" {
		t.Fatalf("answer %+v; want text %q, finish length", a, want)
	}
	if u := a.Usage; u == nil || u.PromptTokens != nPrompt || u.CompletionTokens != 24 || u.TotalTokens != nPrompt+24 {
		t.Errorf("usage %+v", a.Usage)
	}

	evs, _ := events(t, post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":24,"temperature":0,"stream":true}`))
	var text strings.Builder
	for i, ev := range evs {
		if ev.Object != "text_completion" || len(ev.Choices) != 1 || ev.Usage != nil || ev.ID != evs[0].ID {
			t.Fatalf("chunk %d: %+v", i, ev)
		}
		text.WriteString(*ev.Choices[0].Text)
		last := i == len(evs)-1
		if fr := ev.Choices[0].FinishReason; (fr != nil) != last || last && *fr != "length" {
			t.Errorf("chunk %d: finish_reason %v", i, fr)
		}
	}
	if text.String() != want {
		t.Errorf("streamed %q, want %q", text.String(), want)
	}

	// A prompt of token ids is used as given.
	ids, _ := json.Marshal(builtinEngine(t).Tok.Encode("Once upon a time", true, true))
	a = decode(t, post(t, hs.URL+"/v1/completions", `{"prompt":`+string(ids)+`,"max_tokens":24,"temperature":0}`))
	if *a.Choices[0].Text != want {
		t.Errorf("token prompt: %q, want %q", *a.Choices[0].Text, want)
	}
}

func TestChatStream(t *testing.T) {
	s, hs := newServer(t, Config{})
	prompt, err := s.Config().Template.Render([]Message{{"user", "Tell me a story"}})
	if err != nil {
		t.Fatal(err)
	}
	want := greedy(t, prompt, 16)
	evs, raw := events(t, post(t, hs.URL+"/v1/chat/completions",
		`{"messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":16,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`))
	if len(evs) < 3 {
		t.Fatalf("%d events", len(evs))
	}
	if raw[0] != `{"id":"`+evs[0].ID+`","object":"chat.completion.chunk","created":`+regexp.MustCompile(`"created":(\d+)`).FindStringSubmatch(raw[0])[1]+
		`,"model":"stories260K","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}` {
		t.Errorf("first chunk %s", raw[0])
	}
	var text strings.Builder
	for i, ev := range evs[1 : len(evs)-1] {
		c := ev.Choices[0]
		if ev.Object != "chat.completion.chunk" || c.Delta == nil || c.Delta.Role != nil || !strings.Contains(raw[i+1], `"usage":null`) {
			t.Fatalf("chunk %d: %s", i+1, raw[i+1])
		}
		if c.Delta.Content != nil {
			text.WriteString(*c.Delta.Content)
		}
	}
	if fr := evs[len(evs)-2].Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("finish_reason %v, want length", fr)
	}
	if text.String() != want {
		t.Errorf("chat text %q, want %q", text.String(), want)
	}
	u := evs[len(evs)-1]
	if len(u.Choices) != 0 || u.Usage == nil || u.Usage.CompletionTokens != 16 || u.Usage.PromptTokens == 0 || !strings.Contains(raw[len(raw)-1], `"choices":[]`) {
		t.Errorf("usage chunk %s", raw[len(raw)-1])
	}

	// Non-streamed chat: the same text as a message.
	a := decode(t, post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"Tell me a story"}]}],"max_completion_tokens":16,"temperature":0}`))
	if a.Object != "chat.completion" || a.Choices[0].Message == nil || a.Choices[0].Message.Role != "assistant" || a.Choices[0].Message.Content != want {
		t.Errorf("chat answer %+v", a)
	}
}

// script is a fake Generator: each call emits the texts as tokens, a few ms apart
// (none after a token marked in more: the next token of the same step).
type script struct {
	texts []string
	delay time.Duration
	more  []bool // Token.More of each text (nil: none)
}

func (s script) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	st := engine.Stats{PromptTokens: 3}
	for i, tx := range s.texts {
		if err := ctx.Err(); err != nil {
			st.StopReason = "cancelled"
			return st, err
		}
		st.GenTokens++
		more := i < len(s.more) && s.more[i]
		if err := emit(engine.Token{ID: int32(i), Text: tx, Index: i, More: more}); err != nil {
			return st, err
		}
		if req.MaxTokens > 0 && st.GenTokens >= req.MaxTokens {
			st.StopReason = "length"
			return st, nil
		}
		if !more {
			time.Sleep(s.delay)
		}
	}
	st.StopReason = "eos"
	return st, nil
}

func TestStopStrings(t *testing.T) {
	gen := script{texts: []string{"Hel", "lo wo", "rld", "! Bye", " now"}}
	_, hs := newServer(t, Config{Gen: gen, Model: "fake"})
	cases := []struct {
		stop       string
		text, fin  string
		completion int
	}{
		{`"o wor"`, "Hell", "stop", 3},                 // split across three tokens
		{`["xyz","!"]`, "Hello world", "stop", 4},      // inside one token
		{`["wox"]`, "Hello world! Bye now", "stop", 5}, // a prefix that never completes is released (eos: stop)
		{`null`, "Hello world! Bye now", "stop", 5},    // no stop strings
		{`["Hello"]`, "", "stop", 2},                   // at the very start
		{`["now"]`, "Hello world! Bye ", "stop", 5},    // in the last token
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			body := fmt.Sprintf(`{"prompt":"x","max_tokens":50,"stop":%s,"stream":%v,"stream_options":%s}`, c.stop, stream, map[bool]string{true: `{"include_usage":true}`, false: "null"}[stream])
			var text, fin string
			var completion int
			if stream {
				evs, _ := events(t, post(t, hs.URL+"/v1/completions", body))
				for _, ev := range evs {
					if len(ev.Choices) == 0 {
						completion = ev.Usage.CompletionTokens
						continue
					}
					text += *ev.Choices[0].Text
					if c.stop == `"o wor"` && strings.Contains(*ev.Choices[0].Text, "o w") {
						t.Errorf("stop %s: a chunk carries part of the stop string: %q", c.stop, *ev.Choices[0].Text)
					}
					if fr := ev.Choices[0].FinishReason; fr != nil {
						fin = *fr
					}
				}
			} else {
				a := decode(t, post(t, hs.URL+"/v1/completions", body))
				text, fin, completion = *a.Choices[0].Text, *a.Choices[0].FinishReason, a.Usage.CompletionTokens
			}
			if text != c.text || fin != c.fin || completion != c.completion {
				t.Errorf("stop %s stream %v: %q %s %d tokens, want %q %s %d", c.stop, stream, text, fin, completion, c.text, c.fin, c.completion)
			}
		}
	}
	a := decode(t, post(t, hs.URL+"/v1/completions", `{"prompt":"x","max_tokens":2}`))
	if *a.Choices[0].Text != "Hello wo" || *a.Choices[0].FinishReason != "length" {
		t.Errorf("max_tokens 2: %+v", a.Choices[0])
	}
}

// TestStepTokensOneChunk: the tokens of one engine step (speculative decoding's
// accepted tokens, engine.Token.More on all but the last) stream as one chunk; a stop
// string inside such a step still cuts the text where it starts.
func TestStepTokensOneChunk(t *testing.T) {
	gen := script{texts: []string{"A", "b", "c", "D", "e"}, more: []bool{false, true, true, false, false}}
	_, hs := newServer(t, Config{Gen: gen, Model: "fake"})
	cases := []struct {
		stop   string
		chunks []string // the chunks' non-empty texts
	}{
		{`null`, []string{"A", "bcD", "e"}},
		{`["cD"]`, []string{"A", "b"}},
	}
	for _, c := range cases {
		evs, _ := events(t, post(t, hs.URL+"/v1/completions", `{"prompt":"x","max_tokens":50,"stream":true,"stop":`+c.stop+`}`))
		var got []string
		for _, ev := range evs {
			if len(ev.Choices) > 0 && *ev.Choices[0].Text != "" {
				got = append(got, *ev.Choices[0].Text)
			}
		}
		if !slices.Equal(got, c.chunks) {
			t.Errorf("stop %s: chunks %q, want %q", c.stop, got, c.chunks)
		}
	}
}

func TestStopper(t *testing.T) {
	cases := []struct {
		stops  []string
		pushes []string
		sent   []string
		hit    bool
		flush  string
	}{
		{[]string{"abc"}, []string{"xa", "b", "c"}, []string{"x", "", ""}, true, ""},
		{[]string{"abc"}, []string{"xa", "b", "d"}, []string{"x", "", "abd"}, false, ""},
		{[]string{"abc"}, []string{"xab"}, []string{"x"}, false, "ab"},
		{[]string{"bc", "abcd"}, []string{"ab", "c"}, []string{"", "a"}, true, ""},
		{[]string{"é!"}, []string{"café", "!"}, []string{"caf", ""}, true, ""},
		{nil, []string{"a", "b"}, []string{"a", "b"}, false, ""},
	}
	for _, c := range cases {
		s := stopper{stops: c.stops}
		hit := false
		for i, p := range c.pushes {
			out, h := s.push(p)
			hit = h
			if out != c.sent[i] {
				t.Errorf("%v %v: push %d sent %q, want %q", c.stops, c.pushes, i, out, c.sent[i])
			}
		}
		if hit != c.hit || s.flush() != c.flush {
			t.Errorf("%v %v: hit %v", c.stops, c.pushes, hit)
		}
	}
}

func TestSeedDeterminism(t *testing.T) {
	_, hs := newServer(t, Config{})
	get := func(seed int) string {
		a := decode(t, post(t, hs.URL+"/v1/completions", fmt.Sprintf(`{"prompt":"Once upon a time","max_tokens":24,"temperature":1,"top_k":40,"top_p":0.95,"seed":%d}`, seed)))
		return *a.Choices[0].Text
	}
	a, b, c := get(7), get(7), get(8)
	if a != b {
		t.Errorf("seed 7 twice: %q then %q", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 give the same text %q", a)
	}
}

func TestErrors(t *testing.T) {
	_, hs := newServer(t, Config{APIKey: "sekrit", MaxBody: 512})
	key := []string{"Authorization", "Bearer sekrit"}
	cases := []struct {
		name, path, body string
		hdr              []string
		status           int
		code             string
	}{
		{"no key", "/v1/completions", `{"prompt":"x"}`, nil, 401, "invalid_api_key"},
		{"wrong key", "/v1/completions", `{"prompt":"x"}`, []string{"Authorization", "Bearer nope"}, 401, "invalid_api_key"},
		{"too large", "/v1/completions", `{"prompt":"` + strings.Repeat("a", 600) + `"}`, key, 413, "request_too_large"},
		{"malformed", "/v1/completions", `{"prompt":`, key, 400, ""},
		{"no prompt", "/v1/completions", `{}`, key, 400, ""},
		{"no prompts", "/v1/completions", `{"prompt":[]}`, key, 400, ""},
		{"bad token in a list", "/v1/completions", `{"prompt":[[1],[1,99999]]}`, key, 400, ""},
		{"too many choices", "/v1/completions", `{"prompt":["a","b"],"n":65}`, key, 400, ""},
		{"bad token", "/v1/completions", `{"prompt":[1,99999]}`, key, 400, ""},
		{"temperature", "/v1/completions", `{"prompt":"x","temperature":-1}`, key, 400, ""},
		{"top_p", "/v1/completions", `{"prompt":"x","top_p":0}`, key, 400, ""},
		{"max_tokens", "/v1/completions", `{"prompt":"x","max_tokens":0}`, key, 400, ""},
		{"n 0", "/v1/completions", `{"prompt":"x","n":0}`, key, 400, ""},
		{"stream_options", "/v1/completions", `{"prompt":"x","stream_options":{"include_usage":true}}`, key, 400, ""},
		{"wrong model", "/v1/completions", `{"model":"gpt-4","prompt":"x"}`, key, 404, "model_not_found"},
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, key, 400, ""},
		{"bad role", "/v1/chat/completions", `{"messages":[{"role":"tool","content":"x"}]}`, key, 400, ""},
		{"image", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, key, 400, ""},
		{"no route", "/v1/embeddings", `{}`, key, 404, "not_found"},
	}
	for _, c := range cases {
		resp := post(t, hs.URL+c.path, c.body, c.hdr...)
		a := decode(t, resp)
		if resp.StatusCode != c.status || a.Error == nil || a.Error.Message == "" || a.Error.Type == "" || c.code != "" && (a.Error.Code == nil || *a.Error.Code != c.code) {
			t.Errorf("%s: HTTP %d %+v, want %d code %q", c.name, resp.StatusCode, a.Error, c.status, c.code)
		}
	}
	// A prompt longer than the context.
	_, hs2 := newServer(t, Config{})
	long := strings.Repeat("Once upon a time there was a dog. ", 400)
	resp := post(t, hs2.URL+"/v1/completions", `{"prompt":"`+long+`"}`)
	if a := decode(t, resp); resp.StatusCode != 400 || a.Error == nil || *a.Error.Code != "context_length_exceeded" {
		t.Errorf("long prompt: HTTP %d %+v", resp.StatusCode, a.Error)
	}
	// GET on a POST route, and the key opens the door.
	greq, _ := http.NewRequest(http.MethodGet, hs.URL+"/v1/completions", nil)
	greq.Header.Set(key[0], key[1])
	r, _ := http.DefaultClient.Do(greq)
	if r.StatusCode != 405 {
		t.Errorf("GET /v1/completions: %d", r.StatusCode)
	}
	r.Body.Close()
	resp = post(t, hs.URL+"/v1/completions", `{"prompt":"x","max_tokens":2}`, key...)
	if a := decode(t, resp); resp.StatusCode != 200 || len(a.Choices) != 1 {
		t.Errorf("with the key: HTTP %d %+v", resp.StatusCode, a)
	}
	// /health needs no key.
	if r, _ := http.Get(hs.URL + "/health"); r.StatusCode != 200 {
		t.Errorf("/health: %d", r.StatusCode)
	}
}

// blocker is a fake Generator that holds every call until released or cancelled.
type blocker struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan error
}

func (b *blocker) Generate(ctx context.Context, req engine.Request, emit func(engine.Token) error) (engine.Stats, error) {
	b.started <- struct{}{}
	if err := emit(engine.Token{ID: 1, Text: "tick"}); err != nil {
		b.cancelled <- err
		return engine.Stats{}, err
	}
	select {
	case <-b.release:
		return engine.Stats{GenTokens: 1, StopReason: "eos"}, nil
	case <-ctx.Done():
		b.cancelled <- ctx.Err()
		return engine.Stats{StopReason: "cancelled"}, ctx.Err()
	}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 8), release: make(chan struct{}), cancelled: make(chan error, 8)}
}

func TestQueueFull(t *testing.T) {
	b := newBlocker()
	s, hs := newServer(t, Config{Gen: b, Model: "fake", MaxQueue: 1})
	results := make(chan int, 2)
	for range 2 {
		go func() {
			resp := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	<-b.started // one runs
	deadline := time.Now().Add(5 * time.Second)
	for s.waiting.Load() != 1 { // the other waits
		if time.Now().After(deadline) {
			t.Fatal("second request never queued")
		}
		time.Sleep(time.Millisecond)
	}
	m := scrape(t, hs.URL)
	if m["llmbench_num_requests_running"] != 1 || m["llmbench_num_requests_waiting"] != 1 {
		t.Errorf("metrics while full: running %v waiting %v", m["llmbench_num_requests_running"], m["llmbench_num_requests_waiting"])
	}
	resp := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`)
	a := decode(t, resp)
	if resp.StatusCode != 429 || a.Error == nil || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third request: HTTP %d %+v", resp.StatusCode, a.Error)
	}
	close(b.release)
	for range 2 {
		if code := <-results; code != 200 {
			t.Errorf("queued request: HTTP %d", code)
		}
	}
	if m := scrape(t, hs.URL); m["llmbench_requests_rejected_total"] != 1 || m[`llmbench_requests_total{finished_reason="stop"}`] != 2 {
		t.Errorf("metrics after: %v", m)
	}
}

func TestClientDisconnectCancels(t *testing.T) {
	b := newBlocker()
	s, hs := newServer(t, Config{Gen: b, Model: "fake"})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 4; i++ { // the role chunk and the first token
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case err := <-b.cancelled:
		if err == nil {
			t.Error("generator ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the generator never saw the client leave")
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.m.reasons["abort"].Load() != 1 || s.running.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("abort %d running %d", s.m.reasons["abort"].Load(), s.running.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRequestTimeout(t *testing.T) {
	b := newBlocker()
	_, hs := newServer(t, Config{Gen: b, Model: "fake", RequestTimeout: 50 * time.Millisecond})
	resp := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`)
	if a := decode(t, resp); resp.StatusCode != 504 || a.Error == nil || a.Error.Type != "timeout_error" {
		t.Errorf("HTTP %d %+v", resp.StatusCode, a.Error)
	}
}

func TestModelsHealth(t *testing.T) {
	_, hs := newServer(t, Config{APIKey: "k", Root: "/models/x.gguf"})
	r, err := http.Get(hs.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	json.NewDecoder(r.Body).Decode(&h)
	r.Body.Close()
	if r.StatusCode != 200 || h["status"] != "ok" {
		t.Errorf("/health: %d %v", r.StatusCode, h)
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer k")
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Object string
		Data   []struct {
			ID, Object, Root string
			MaxModelLen      int `json:"max_model_len"`
		}
	}
	json.NewDecoder(r.Body).Decode(&m)
	r.Body.Close()
	if m.Object != "list" || len(m.Data) != 1 || m.Data[0].ID != "stories260K" || m.Data[0].Object != "model" || m.Data[0].MaxModelLen != 2048 || m.Data[0].Root != "/models/x.gguf" {
		t.Errorf("/v1/models: %+v", m)
	}
}

// stats is a fake scheduler that reports its state.
type stats struct{ script }

func (stats) SchedulerStats() SchedulerStats {
	return SchedulerStats{Running: 3, Waiting: 2, KVBlocksUsed: 10, KVBlocksTotal: 40, PrefixQueryTokens: 200, PrefixHitTokens: 150, Preemptions: 4}
}

var metricLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (\S+)$`)

// scrape reads /metrics, checking every line, and returns the samples by name (the
// model_name label left out).
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	r, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	b, _ := io.ReadAll(r.Body)
	out := map[string]float64{}
	for _, ln := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if strings.HasPrefix(ln, "# HELP ") || strings.HasPrefix(ln, "# TYPE ") {
			continue
		}
		m := metricLine.FindStringSubmatch(ln)
		if m == nil {
			t.Fatalf("/metrics line %q is not `name{labels} value`", ln)
		}
		var v float64
		if _, err := fmt.Sscan(m[3], &v); err != nil {
			t.Fatalf("/metrics line %q: value: %v", ln, err)
		}
		labels := regexp.MustCompile(`,?model_name="(?:[^"\\]|\\.)*",?`).ReplaceAllString(m[2], "")
		if labels == "{}" {
			labels = ""
		}
		out[m[1]+labels] = v
	}
	return out
}

func TestMetrics(t *testing.T) {
	_, hs := newServer(t, Config{Gen: stats{script{texts: []string{"a", "b", "c"}}}, Model: `odd"name`})
	for range 2 {
		resp := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	m := scrape(t, hs.URL)
	want := map[string]float64{
		"llmbench_num_requests_running": 3, "llmbench_num_requests_waiting": 2,
		"llmbench_kv_cache_blocks_used": 10, "llmbench_kv_cache_blocks_total": 40, "llmbench_kv_cache_usage_ratio": 0.25,
		"llmbench_prefix_cache_hit_rate": 0.75, "llmbench_num_preemptions_total": 4, "llmbench_generation_tokens_total": 6, "llmbench_prompt_tokens_total": 6,
		`llmbench_requests_total{finished_reason="stop"}`: 2, "llmbench_time_to_first_token_seconds_count": 2,
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if m["llmbench_generation_tokens_per_second"] <= 0 {
		t.Errorf("tokens/s %v", m["llmbench_generation_tokens_per_second"])
	}
}
