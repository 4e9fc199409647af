package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"llmbench/engine"
	"llmbench/engine/sample"
	"llmbench/workloads/jobs"
)

func runGenerate(ctx context.Context, args []string) error {
	fs := newFlags("generate", "[-m FILE] -p TEXT [-n N] [--temp T --top-k K --top-p P --min-p P --seed S] [-t THREADS]", nil)
	path := fs.String("m", "", "GGUF model `file` (default: the built-in stories260K)")
	prompt := fs.String("p", "Once upon a time", "prompt `text`")
	n := fs.Int("n", 128, "tokens to generate (-1: until end of sequence or context)")
	temp := fs.Float64("temp", 0, "sampling temperature (0 = greedy)")
	topK := fs.Int("top-k", 40, "top-k (0 = off)")
	topP := fs.Float64("top-p", 0.95, "top-p (1 = off)")
	minP := fs.Float64("min-p", 0.05, "min-p (0 = off)")
	rep := fs.Float64("repeat-penalty", 1, "repetition penalty (1 = off)")
	seed := fs.Uint64("seed", 42, "random seed for sampling")
	threads := fs.Int("t", 0, "threads (0 = all cores)")
	ctxSize := fs.Int("c", 0, "context size (0 = the model's)")
	ignoreEOS := fs.Bool("ignore-eos", false, "keep generating past end-of-sequence")
	if err := parse(fs, args); err != nil {
		return err
	}
	ref, err := jobs.ModelRef(*path, "")
	if err != nil {
		return usageErr("generate", err)
	}
	e, _, err := jobs.OpenModel(ctx, ref, engine.Options{Threads: *threads, Context: *ctxSize}, "", nil)
	if err != nil {
		return err
	}
	defer e.Close()
	req := engine.Request{
		Prompt:    *prompt,
		MaxTokens: *n,
		IgnoreEOS: *ignoreEOS,
		Sampling: sample.Params{Temperature: float32(*temp), TopK: *topK, TopP: float32(*topP), MinP: float32(*minP),
			RepeatPenalty: float32(*rep), RepeatLastN: 64, Seed: *seed},
	}
	return generate(ctx, os.Stdout, os.Stderr, e, req)
}

// generate streams a generation to out (the prompt as the model sees it, then each
// token as it is produced) and reports speed to log, as llama.cpp's tools do.
func generate(ctx context.Context, out, log io.Writer, e *engine.Engine, req engine.Request) error {
	fmt.Fprintf(log, "model: %s (%s, %d threads)\n", e.Source, e.Backend().Name(), e.Backend().Threads())
	if req.Tokens == nil {
		req.Tokens = e.Tok.Encode(req.Prompt, true, true)
	}
	var prompt []byte
	for _, id := range req.Tokens {
		prompt = append(prompt, e.Tok.Piece(id)...)
	}
	if _, err := out.Write(prompt); err != nil {
		return err
	}
	st, err := e.Generate(ctx, req, func(t engine.Token) error {
		_, err := io.WriteString(out, t.Text)
		return err
	})
	fmt.Fprintln(out)
	if st.PromptTokens > 0 {
		fmt.Fprintf(log, "\nprompt:     %4d tokens in %8.2f ms (%9.2f tokens/s)\n", st.PromptTokens, ms(st.PromptTime), st.PromptTPS())
		fmt.Fprintf(log, "generation: %4d tokens in %8.2f ms (%9.2f tokens/s, after the first)  stop: %s\n",
			st.GenTokens, ms(st.GenTime), st.GenTPS(), st.StopReason)
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
