package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"llmbench/workloads/metrics"
)

// MaxResponseBytes caps a non-streaming response: a longer one fails the request as
// malformed instead of growing without bound.
const MaxResponseBytes = 64 << 20

// wholeResponse holds the members of a non-streaming answer that a record needs:
// OpenAI's choices and usage, TGI's generated_text and details, llama.cpp's content,
// tokens_predicted and timings, and an error object or string.
type wholeResponse struct {
	Choices []struct {
		Text    *string `json:"text"`
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens *int `json:"completion_tokens"`
	} `json:"usage"`
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		GeneratedTokens *int `json:"generated_tokens"`
	} `json:"details"`
	Content         *string         `json:"content"`
	TokensPredicted *int            `json:"tokens_predicted"`
	Timings         map[string]any  `json:"timings"`
	Error           json.RawMessage `json:"error"`
}

// whole reads a non-streaming answer into rec: E2EL is send until the response was
// read in full; the output tokens come from the response's count (usage, details,
// tokens_predicted), else from our tokenizer on its text (Retokenized). TTFT and ITL
// are not measured.
func (c *HTTP) whole(run, ctx context.Context, body io.Reader, rec *metrics.Record, now func() time.Duration) {
	rec.NonStreaming = true
	raw, err := io.ReadAll(io.LimitReader(body, MaxResponseBytes+1))
	at := now()
	if err != nil {
		rec.Fail(failReason(run, ctx, err, c.Timeout))
		return
	}
	if len(raw) > MaxResponseBytes {
		rec.Fail(metrics.ReasonMalformed, fmt.Sprintf("malformed response: longer than %d bytes", MaxResponseBytes))
		return
	}
	rec.Latency = at - rec.Start
	var r wholeResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		rec.Fail(metrics.ReasonMalformed, "malformed response: "+string(truncate(raw, 72)))
		return
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		var msg struct {
			Message string `json:"message"`
		}
		var str string
		detail := string(r.Error)
		if json.Unmarshal(r.Error, &str) == nil {
			detail = str
		} else if json.Unmarshal(r.Error, &msg) == nil && msg.Message != "" {
			detail = msg.Message
		}
		rec.Fail(metrics.ReasonServerError, "server error: "+strings.ToValidUTF8(string(truncate([]byte(detail), 160)), "?"))
		return
	}
	var text *string
	count := (*int)(nil)
	switch c.Backend {
	case "openai", "openai-chat":
		if len(r.Choices) > 0 {
			ch := r.Choices[0]
			if c.Backend == "openai-chat" && ch.Message != nil {
				text = ch.Message.Content
			} else {
				text = ch.Text
			}
			if text == nil {
				text = new(string)
			}
		}
		if r.Usage != nil {
			count = r.Usage.CompletionTokens
		}
	case "tgi":
		text = r.GeneratedText
		if r.Details != nil {
			count = r.Details.GeneratedTokens
		}
	case "llamacpp":
		text, count = r.Content, r.TokensPredicted
		if len(r.Timings) > 0 {
			rec.Extra = map[string]float64{}
			for _, k := range llamaTimingKeys {
				if v, ok := r.Timings[k].(float64); ok {
					rec.Extra["llamacpp_"+k] = v
				}
			}
		}
	}
	if text == nil {
		rec.Fail(metrics.ReasonIncomplete, "incomplete response: no generated text")
		return
	}
	switch {
	case count != nil:
		rec.OutputTokens = *count
	case c.Tok != nil:
		rec.OutputTokens = len(c.Tok.Encode(*text, false, false))
		rec.Retokenized = true
	default:
		rec.Fail(metrics.ReasonIncomplete, "incomplete response: no token count and no tokenizer to count its text")
		return
	}
	if c.KeepText {
		rec.Text = *text
	}
	rec.Stream.Tokens(at, rec.OutputTokens)
	if rec.OutputTokens <= 0 {
		rec.Fail(metrics.ReasonIncomplete, "empty response: no tokens")
		return
	}
	rec.Success = true
}
