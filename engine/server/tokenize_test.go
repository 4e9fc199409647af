package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
)

// decodeAs reads a JSON answer, checking its status.
func decodeAs(t *testing.T, resp *http.Response, status int, v any) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// TestTokenizeDetokenize checks /tokenize and /detokenize in vLLM's and
// llama-server's shapes against the tokenizer itself, over plain HTTP.
func TestTokenizeDetokenize(t *testing.T) {
	s, hs := newServer(t, Config{})
	tok := builtinEngine(t).Tok
	const text = "Once upon a time, a cat"

	var v struct {
		Count       int     `json:"count"`
		MaxModelLen int     `json:"max_model_len"`
		Tokens      []int32 `json:"tokens"`
	}
	decodeAs(t, post(t, hs.URL+"/tokenize", fmt.Sprintf(`{"model":"stories260K","prompt":%q}`, text)), 200, &v)
	if want := tok.Encode(text, true, true); !slices.Equal(v.Tokens, want) || v.Count != len(want) || v.MaxModelLen != s.Config().Context {
		t.Errorf("vLLM /tokenize = %+v, want tokens %v, count %d, max_model_len %d", v, want, len(want), s.Config().Context)
	}
	if v.Tokens[0] != tok.BOS() {
		t.Errorf("vLLM /tokenize adds special tokens by default: %v", v.Tokens)
	}
	var noBOS struct{ Tokens []int32 }
	decodeAs(t, post(t, hs.URL+"/tokenize", fmt.Sprintf(`{"prompt":%q,"add_special_tokens":false}`, text)), 200, &noBOS)
	if !slices.Equal(noBOS.Tokens, v.Tokens[1:]) {
		t.Errorf("add_special_tokens false: %v, want %v", noBOS.Tokens, v.Tokens[1:])
	}

	var l map[string]json.RawMessage
	decodeAs(t, post(t, hs.URL+"/tokenize", fmt.Sprintf(`{"content":%q}`, text)), 200, &l)
	var lt []int32
	json.Unmarshal(l["tokens"], &lt)
	if want := tok.Encode(text, false, true); len(l) != 1 || !slices.Equal(lt, want) {
		t.Errorf("llama-server /tokenize = %v, want only tokens %v", l, want)
	}
	decodeAs(t, post(t, hs.URL+"/tokenize", fmt.Sprintf(`{"content":%q,"add_special":true}`, text)), 200, &l)
	json.Unmarshal(l["tokens"], &lt)
	if !slices.Equal(lt, v.Tokens) {
		t.Errorf("add_special true: %v, want %v", lt, v.Tokens)
	}

	var d struct{ Prompt, Content string }
	ids, _ := json.Marshal(noBOS.Tokens)
	decodeAs(t, post(t, hs.URL+"/detokenize", `{"tokens":`+string(ids)+`}`), 200, &d)
	if d.Prompt != text || d.Content != tok.Decode(noBOS.Tokens) {
		t.Errorf("/detokenize = %+v, want prompt %q (vLLM) and content %q (llama-server)", d, text, tok.Decode(noBOS.Tokens))
	}

	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/tokenize", `{"model":"other","prompt":"x"}`, 404},
		{"/tokenize", `{}`, 400},
		{"/tokenize", `{"prompt":`, 400},
		{"/detokenize", `{"tokens":[-1]}`, 400},
		{"/detokenize", `{"tokens":"abc"}`, 400},
		{"/detokenize", `{}`, 400},
	} {
		var e struct {
			Error *struct{ Message, Type string }
		}
		decodeAs(t, post(t, hs.URL+c.path, c.body), c.status, &e)
		if e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s %s: %+v, want an OpenAI error", c.path, c.body, e)
		}
	}
}

// TestModelByID checks GET /v1/models/{id}: the served model, or a 404 in OpenAI's shape.
func TestModelByID(t *testing.T) {
	_, hs := newServer(t, Config{Root: "/models/x.gguf"})
	r, err := http.Get(hs.URL + "/v1/models/stories260K")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	decodeAs(t, r, 200, &got)
	if got["id"] != "stories260K" || got["object"] != "model" || got["owned_by"] != "llmbench" || got["root"] != "/models/x.gguf" {
		t.Errorf("/v1/models/stories260K = %v", got)
	}
	for _, id := range []string{"nope", "stories260K/extra", ""} {
		r, err := http.Get(hs.URL + "/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error *struct{ Message, Type, Code string }
		}
		decodeAs(t, r, 404, &e)
		if e.Error == nil || e.Error.Code != "model_not_found" || e.Error.Type != "invalid_request_error" {
			t.Errorf("/v1/models/%s: %+v, want OpenAI's model_not_found", id, e.Error)
		}
	}
}
