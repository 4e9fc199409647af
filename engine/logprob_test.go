package engine

import (
	"context"
	"math"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/sample"
)

// TestGenerateLogprobs checks that the tokens of a greedy generation carry their
// log-probability and top alternatives: the greedy token is the most likely one, the
// alternatives come most likely first, and without Logprobs nothing is computed.
func TestGenerateLogprobs(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := Request{Prompt: "Once upon a time", MaxTokens: 6, Sampling: sample.Params{Temperature: 0}, Logprobs: true, TopLogprobs: 3}
	var toks []Token
	if _, err := e.Generate(context.Background(), req, func(tk Token) error { toks = append(toks, tk); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if len(tk.Top) != 3 || tk.Top[0].ID != tk.ID || tk.Top[0].Logprob != tk.Logprob || tk.Logprob > 0 || math.IsNaN(float64(tk.Logprob)) {
			t.Fatalf("token %d: logprob %v, top %+v", tk.ID, tk.Logprob, tk.Top)
		}
		for i := 1; i < len(tk.Top); i++ {
			if tk.Top[i].Logprob > tk.Top[i-1].Logprob {
				t.Fatalf("top not in order: %+v", tk.Top)
			}
		}
	}
	req.Logprobs, req.TopLogprobs = false, 0
	if _, err := e.Generate(context.Background(), req, func(tk Token) error {
		if tk.Logprob != 0 || tk.Top != nil {
			t.Errorf("logprobs without asking: %+v", tk)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
