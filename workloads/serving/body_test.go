package serving

import (
	"encoding/json"
	"reflect"
	"testing"
)

// mapBody is the request body as a map, marshalled by encoding/json: the oracle the
// appending body builder is checked against.
func mapBody(c *HTTP, req *Request) map[string]any {
	b := map[string]any{}
	set := func(m map[string]any, withTemp bool) {
		if withTemp {
			m["temperature"] = c.Sampling.Temp()
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
		b["model"], b["stream"] = c.Model, true
		b["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
		if c.Backend == "openai" {
			b["prompt"], b["max_tokens"] = req.Prompt, req.OutputLen
		} else {
			b["messages"] = []map[string]string{{"role": "user", "content": req.Prompt}}
			b["max_completion_tokens"] = req.OutputLen
		}
		if c.IgnoreEOS {
			b["ignore_eos"] = true
		}
		set(b, true)
	case "tgi":
		p := map[string]any{"max_new_tokens": req.OutputLen, "details": true}
		if c.Sampling.Temp() > 0 {
			p["do_sample"] = true
		}
		set(p, c.Sampling.Temp() > 0)
		b["inputs"], b["parameters"] = req.Prompt, p
	case "llamacpp":
		b["prompt"], b["n_predict"], b["stream"] = req.Prompt, req.OutputLen, true
		if c.IgnoreEOS {
			b["ignore_eos"] = true
		}
		set(b, true)
	}
	raw, _ := json.Marshal(b)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return m
}

// TestBodyMatchesEncodingJSON: the appended body decodes to what encoding/json makes
// of the same fields, for every backend, sampling set or not, and prompts with
// quotes, control characters, non-ASCII and invalid UTF-8.
func TestBodyMatchesEncodingJSON(t *testing.T) {
	temp, topP, topK := 0.7, 0.9, 40
	tiny := 1e-7
	samplings := []Sampling{{}, {Temperature: &temp, TopP: &topP, TopK: &topK}, {Temperature: &tiny}}
	prompts := []string{"", "hello", "a \"quoted\" \\ back\nslash\ttab\r\x00\x1f\x7f <&>", "é ü 日本 😀", "bad \xff\xfe utf8 \xe2\x82"}
	for _, backend := range []string{"openai", "openai-chat", "tgi", "llamacpp"} {
		for _, s := range samplings {
			for _, ignore := range []bool{false, true} {
				for _, p := range prompts {
					c := &HTTP{Backend: backend, Model: `m"odel`, Sampling: s, IgnoreEOS: ignore}
					req := &Request{Prompt: p, OutputLen: 17}
					raw, err := c.body(req)
					if err != nil {
						t.Fatal(err)
					}
					var got map[string]any
					if err := json.Unmarshal(raw, &got); err != nil {
						t.Fatalf("%s %q: invalid JSON %s: %v", backend, p, raw, err)
					}
					if want := mapBody(c, req); !reflect.DeepEqual(got, want) {
						t.Errorf("%s %q:\n got %v\nwant %v", backend, p, got, want)
					}
				}
			}
		}
	}
	nan := 0.0
	nan /= nan
	if _, err := (&HTTP{Backend: "openai", Sampling: Sampling{Temperature: &nan}}).body(&Request{}); err == nil {
		t.Error("a NaN temperature made a body")
	}
	if _, err := (&HTTP{Backend: "nope"}).body(&Request{}); err == nil {
		t.Error("an unknown backend made a body")
	}
}

func BenchmarkBody(b *testing.B) {
	c := &HTTP{Backend: "openai", Model: "m", IgnoreEOS: true}
	r := &Request{Prompt: "p123 hello world, this is a prompt of some length", OutputLen: 50}
	b.ReportAllocs()
	for b.Loop() {
		c.body(r)
	}
}
