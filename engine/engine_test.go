package engine

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/sample"
)

// TestGreedyMatchesLlamaCpp generates 64 greedy tokens from "Once upon a time" on each
// real model and compares the text with what llama.cpp printed (testdata/models/
// greedy-*.txt: the prompt as detokenized, the continuation, then the tool's own
// closing "\n\n", which is not model output). The match must be exact.
func TestGreedyMatchesLlamaCpp(t *testing.T) {
	cases := []struct{ model, ref string }{
		{"builtin/stories260K.gguf", "greedy-stories260K.txt"},
		{"../testdata/models/tinystories-656k-q8_0.gguf", "greedy-tinystories-656k-q8_0.txt"},
		{"../testdata/models/TinyStories-656K.f16.gguf", "greedy-TinyStories-656K.f16.txt"},
	}
	for _, c := range cases {
		t.Run(c.ref, func(t *testing.T) {
			raw, err := os.ReadFile("../testdata/models/" + c.ref)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := strings.CutSuffix(string(raw), "\n\n")
			if !ok {
				t.Fatalf("%s does not end in llama.cpp's closing blank line", c.ref)
			}
			e, err := Load(context.Background(), c.model, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ids := e.Tok.Encode("Once upon a time", true, true)
			var b strings.Builder
			for _, id := range ids {
				b.Write(e.Tok.Piece(id))
			}
			st, err := e.Generate(context.Background(), Request{Tokens: ids, MaxTokens: 64}, func(tok Token) error {
				b.WriteString(tok.Text)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if st.GenTokens != 64 || st.StopReason != "length" {
				t.Errorf("generated %d tokens, stop %q; want 64, length", st.GenTokens, st.StopReason)
			}
			if got := b.String(); got != want {
				t.Errorf("greedy text differs from llama.cpp\n got: %q\nwant: %q", got, want)
			}
		})
	}
}

func TestGenerateStops(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 1, Context: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	nop := func(Token) error { return nil }
	// The context bounds generation.
	st, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", IgnoreEOS: true}, nop)
	if err != nil || st.StopReason != "context" || st.PromptTokens+st.GenTokens != 16 {
		t.Errorf("context stop: %+v, %v", st, err)
	}
	// A prompt that does not fit is refused.
	long := strings.Repeat("Once upon a time ", 10)
	if _, err := e.Generate(context.Background(), Request{Prompt: long}, nop); !errors.Is(err, ErrContextFull) {
		t.Errorf("long prompt: err = %v, want ErrContextFull", err)
	}
	// Cancellation returns the context's error and the stats so far.
	ctx, cancel := context.WithCancel(context.Background())
	st, err = e.Generate(ctx, Request{Prompt: "Once", MaxTokens: 10}, func(tok Token) error {
		if tok.Index == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || st.GenTokens != 3 || st.StopReason != "cancelled" {
		t.Errorf("cancel: %+v, %v", st, err)
	}
	// An error from emit stops generation and is returned.
	boom := errors.New("boom")
	if _, err := e.Generate(context.Background(), Request{Prompt: "Once", MaxTokens: 5}, func(Token) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("emit error: %v", err)
	}
}

func TestSampledGenerationIsSeeded(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	run := func(seed uint64) string {
		var b strings.Builder
		p := sample.DefaultParams()
		p.Seed = seed
		if _, err := e.Generate(context.Background(), Request{Prompt: "Once upon a time", MaxTokens: 40, Sampling: p}, func(tok Token) error {
			b.WriteString(tok.Text)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b, c := run(1), run(1), run(2)
	if a != b {
		t.Errorf("same seed, different text:\n%q\n%q", a, b)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 gave the same 40 tokens: %q", a)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(context.Background(), "no/such.gguf", Options{}); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := LoadBytes(context.Background(), "x", []byte("GGUF\x03\x00\x00\x00"), Options{}); err == nil {
		t.Error("truncated: no error")
	}
	if _, err := LoadBytes(context.Background(), "x", builtin.Stories260K, Options{Backend: "tpu"}); err == nil || !strings.Contains(err.Error(), "tpu") {
		t.Errorf("unknown backend: %v", err)
	}
}
