package server

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"llmbench/engine"
	"llmbench/engine/sample"
)

// TestLogprobs checks logprobs of completions (logprobs: N) and chat (logprobs,
// top_logprobs), streamed and not, against the engine's own tokens for the same
// greedy request (whose values sample.Logprobs computes, tested against a reference).
func TestLogprobs(t *testing.T) {
	_, hs := newServer(t, Config{})
	e := builtinEngine(t)
	const prompt, maxTokens = "Once upon a time", 6
	var ref []engine.Token
	req := engine.Request{Prompt: prompt, MaxTokens: maxTokens, Sampling: sample.Params{Temperature: 0}, Logprobs: true, TopLogprobs: 3}
	if _, err := e.Generate(context.Background(), req, func(tk engine.Token) error { ref = append(ref, tk); return nil }); err != nil {
		t.Fatal(err)
	}
	near := func(a float64, b float32) bool { return math.Abs(a-float64(b)) < 1e-6 }

	type complLP struct {
		Tokens        []string             `json:"tokens"`
		TokenLogprobs []float64            `json:"token_logprobs"`
		TopLogprobs   []map[string]float64 `json:"top_logprobs"`
		TextOffset    []int                `json:"text_offset"`
	}
	var a struct {
		Choices []struct {
			Text     string  `json:"text"`
			Logprobs complLP `json:"logprobs"`
		} `json:"choices"`
	}
	decodeAs(t, post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":6,"temperature":0,"logprobs":3}`), 200, &a)
	lp := a.Choices[0].Logprobs
	if len(lp.Tokens) != len(ref) || len(lp.TokenLogprobs) != len(ref) || len(lp.TopLogprobs) != len(ref) || len(lp.TextOffset) != len(ref) {
		t.Fatalf("completions logprobs %+v for %d tokens", lp, len(ref))
	}
	off := 0
	for i, tk := range ref {
		piece := e.Tok.Decode([]int32{tk.ID})
		if lp.Tokens[i] != piece || !near(lp.TokenLogprobs[i], tk.Logprob) || lp.TextOffset[i] != off || len(lp.TopLogprobs[i]) < 3 {
			t.Errorf("token %d: %q %v offset %d top %v; want %q %v offset %d", i, lp.Tokens[i], lp.TokenLogprobs[i], lp.TextOffset[i], lp.TopLogprobs[i], piece, tk.Logprob, off)
		}
		for _, alt := range tk.Top {
			if v, ok := lp.TopLogprobs[i][e.Tok.Decode([]int32{alt.ID})]; !ok || !near(v, alt.Logprob) {
				t.Errorf("token %d: top %v lacks %d (%v)", i, lp.TopLogprobs[i], alt.ID, alt.Logprob)
			}
		}
		off += len(tk.Text)
	}
	if strings.Join(lp.Tokens, "") != a.Choices[0].Text {
		t.Errorf("tokens %q do not spell the text %q", lp.Tokens, a.Choices[0].Text)
	}

	// Chat, streamed: the entries of every chunk add up to one per token.
	type entry struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		Bytes   []int   `json:"bytes"`
		Top     []entry `json:"top_logprobs"`
	}
	body := `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":6,"temperature":0,"logprobs":true,"top_logprobs":2`
	_, raw := events(t, post(t, hs.URL+"/v1/chat/completions", body+`,"stream":true}`))
	var streamed []entry
	for _, r := range raw {
		var c struct {
			Choices []struct {
				Logprobs *struct{ Content []entry } `json:"logprobs"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(r), &c) == nil && len(c.Choices) > 0 && c.Choices[0].Logprobs != nil {
			streamed = append(streamed, c.Choices[0].Logprobs.Content...)
		}
	}
	var nc struct {
		Choices []struct {
			Logprobs struct{ Content []entry } `json:"logprobs"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	decodeAs(t, post(t, hs.URL+"/v1/chat/completions", body+`}`), 200, &nc)
	whole := nc.Choices[0].Logprobs.Content
	if len(whole) != nc.Usage.CompletionTokens || len(streamed) != len(whole) {
		t.Fatalf("chat logprobs: %d entries (streamed %d) for %d tokens", len(whole), len(streamed), nc.Usage.CompletionTokens)
	}
	for i, w := range whole {
		s := streamed[i]
		if s.Token != w.Token || s.Logprob != w.Logprob || len(w.Top) != 2 || w.Top[0].Token != w.Token || w.Top[0].Logprob != w.Logprob || len(w.Bytes) != len(w.Token) && !strings.ContainsRune(w.Token, '\uFFFD') {
			t.Errorf("chat entry %d: %+v, streamed %+v", i, w, s)
		}
	}

	for _, c := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt":"x","logprobs":21}`},
		{"/v1/completions", `{"prompt":"x","logprobs":-1}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_logprobs":2}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":3}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21}`},
	} {
		var e struct{ Error *struct{ Message string } }
		decodeAs(t, post(t, hs.URL+c.path, c.body), 400, &e)
		if e.Error == nil {
			t.Errorf("%s %s: no error object", c.path, c.body)
		}
	}
}
