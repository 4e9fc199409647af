package server

import (
	"encoding/json"
	"math"

	"llmbench/engine"
)

// maxTopLogprobs bounds the alternatives per token (vLLM's default max_logprobs).
const maxTopLogprobs = 20

// minLogprob stands for -Inf, which JSON cannot carry (vLLM writes the same).
const minLogprob = -9999.0

// parseLogprobs reads the logprobs fields into req: for completions, logprobs is the
// number of alternatives per token (0 to 20; the sampled token's own log-probability
// comes with any); for chat, logprobs is a bool and top_logprobs the number (which
// needs logprobs).
func parseLogprobs(q *request, chat bool, req *engine.Request) *apiError {
	raw := q.Logprobs
	off := len(raw) == 0 || string(raw) == "null"
	if chat {
		var on bool
		if !off && json.Unmarshal(raw, &on) != nil {
			return badRequest("logprobs must be true or false")
		}
		top := 0
		if q.TopLogprobs != nil {
			top = *q.TopLogprobs
			if !on {
				return badRequest("top_logprobs needs logprobs: true")
			}
		}
		if top < 0 || top > maxTopLogprobs {
			return badRequest("top_logprobs = %d: must be in [0, %d]", top, maxTopLogprobs)
		}
		req.Logprobs, req.TopLogprobs = on, top
		return nil
	}
	if off || string(raw) == "false" {
		return nil
	}
	var n int
	if json.Unmarshal(raw, &n) != nil || n < 0 || n > maxTopLogprobs {
		return badRequest("logprobs = %s: must be an integer in [0, %d]", raw, maxTopLogprobs)
	}
	req.Logprobs, req.TopLogprobs = true, n
	return nil
}

// logprobEntry is one generated token's log-probability, waiting for the chunk (or
// answer) that carries it.
type logprobEntry struct {
	tok    engine.Token
	offset int // text bytes generated before it
}

// takeLogprobs returns the logprobs object of the tokens not yet sent, in
// OpenAI's shape for the endpoint (nil when logprobs were not asked for), and clears
// them.
func (o *output) takeLogprobs() any {
	if !o.j.req.Logprobs {
		return nil
	}
	lps := o.lps
	o.lps = nil
	if o.j.chat {
		content := make([]chatLogprob, len(lps))
		for i, e := range lps {
			content[i] = o.chatLogprob(e.tok.ID, e.tok.Logprob)
			content[i].Top = make([]chatLogprob, len(e.tok.Top))
			for k, a := range e.tok.Top {
				content[i].Top[k] = o.chatLogprob(a.ID, a.Logprob)
			}
		}
		return map[string]any{"content": content}
	}
	c := completionLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, e := range lps {
		c.Tokens = append(c.Tokens, o.tokenText(e.tok.ID))
		c.TokenLogprobs = append(c.TokenLogprobs, finite(e.tok.Logprob))
		top := map[string]float64{o.tokenText(e.tok.ID): finite(e.tok.Logprob)} // the sampled token is always there, as in vLLM
		for _, a := range e.tok.Top {
			top[o.tokenText(a.ID)] = finite(a.Logprob)
		}
		c.TopLogprobs = append(c.TopLogprobs, top)
		c.TextOffset = append(c.TextOffset, e.offset)
	}
	return c
}

// completionLogprobs is the logprobs object of a /v1/completions choice.
type completionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// chatLogprob is one entry of a chat choice's logprobs.content (Top only at the
// first level).
type chatLogprob struct {
	Token   string        `json:"token"`
	Logprob float64       `json:"logprob"`
	Bytes   []int         `json:"bytes"`
	Top     []chatLogprob `json:"top_logprobs,omitempty"`
}

func (o *output) chatLogprob(id int32, lp float32) chatLogprob {
	text := o.tokenText(id)
	b := make([]int, len(text))
	for i := range len(text) {
		b[i] = int(text[i])
	}
	return chatLogprob{Token: text, Logprob: finite(lp), Bytes: b}
}

// tokenText is a token's piece of text (its raw bytes; JSON shows invalid UTF-8 as
// U+FFFD, and bytes carry the truth).
func (o *output) tokenText(id int32) string {
	if d, ok := o.s.cfg.Tok.(Detokenizer); ok {
		return d.Decode([]int32{id})
	}
	return ""
}

func finite(lp float32) float64 {
	if math.IsInf(float64(lp), -1) || lp < minLogprob {
		return minLogprob
	}
	return float64(lp)
}
