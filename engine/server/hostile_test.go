package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHugeMaxTokens: max_tokens 2^63-1 (streamed or not) is clamped to what the
// context leaves, so the answer is a 200 ending at the context with finish_reason
// "length" — no handler panic.
func TestHugeMaxTokens(t *testing.T) {
	e := builtinEngine(t)
	_, hs := newServer(t, Config{Gen: e, Tok: e.Tok, Context: 40})
	resp := post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":9223372036854775807,"ignore_eos":true}`)
	a := decode(t, resp)
	if resp.StatusCode != 200 || len(a.Choices) != 1 || a.Choices[0].FinishReason == nil || *a.Choices[0].FinishReason != "length" ||
		a.Usage == nil || a.Usage.TotalTokens != 40 {
		t.Errorf("HTTP %d %+v usage %+v", resp.StatusCode, a.Choices, a.Usage)
	}
	resp = post(t, hs.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_completion_tokens":9223372036854775807,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	evs, _ := events(t, resp)
	if last := evs[len(evs)-1]; last.Usage == nil || last.Usage.TotalTokens != 40 {
		t.Errorf("stream: last event %+v", last)
	}
}

// countingTok counts the prompts it tokenizes.
type countingTok struct {
	Tokenizer
	n atomic.Int64
}

func (c *countingTok) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	c.n.Add(1)
	return c.Tokenizer.Encode(text, addSpecial, parseSpecial)
}

// TestQueueFullBeforeBody: with every place taken, a request is answered 429 at once,
// before its body is read (a client that sends only part of it gets its answer) and
// without tokenizing its prompt.
func TestQueueFullBeforeBody(t *testing.T) {
	b := newBlocker()
	tok := &countingTok{Tokenizer: builtinEngine(t).Tok}
	s, hs := newServer(t, Config{Gen: b, Tok: tok, Model: "fake", MaxQueue: -1, BodyTimeout: 20 * time.Second})
	release := sync.OnceFunc(func() { close(b.release) })
	t.Cleanup(release) // before the server closes, even when the test fails
	done := make(chan int, 1)
	go func() {
		resp := post(t, hs.URL+"/v1/completions", `{"prompt":"x"}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-b.started // the one place is taken
	if tok.n.Load() != 1 {
		t.Fatalf("%d prompts tokenized, want 1", tok.n.Load())
	}
	// A whole body: refused without tokenizing.
	resp := post(t, hs.URL+"/v1/completions", `{"prompt":"Once upon a time"}`)
	if a := decode(t, resp); resp.StatusCode != 429 || a.Error == nil || a.Error.Code == nil || *a.Error.Code != "queue_full" {
		t.Errorf("full server: HTTP %d %+v", resp.StatusCode, a.Error)
	}
	if n := tok.n.Load(); n != 1 {
		t.Errorf("the refused prompt was tokenized (%d prompts tokenized, want 1)", n)
	}
	// Half a body: the answer comes without waiting for the rest.
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"prompt":"Once upon a time"}`
	if _, err := io.WriteString(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"Content-Length: 1000\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a half-sent body while full: %v", err)
	}
	r.Body.Close()
	if r.StatusCode != 429 {
		t.Errorf("half-sent body: HTTP %d, want 429", r.StatusCode)
	}
	release()
	if code := <-done; code != 200 {
		t.Errorf("running request: HTTP %d", code)
	}
	for deadline := time.Now().Add(5 * time.Second); s.waiting.Load() != 0 || s.running.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("places left held: waiting %d, running %d", s.waiting.Load(), s.running.Load())
		}
	}
}
