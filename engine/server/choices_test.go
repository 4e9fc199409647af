package server

import (
	"fmt"
	"testing"
)

// TestChoices checks an array of prompts and n > 1 against single requests: choice
// i×n+k is what prompt i gives alone under the seed plus k, in index order, streamed
// or not, and usage counts each prompt once and every generated token.
func TestChoices(t *testing.T) {
	_, hs := newServer(t, Config{})
	prompts := []string{"Once upon a time", "The cat"}
	const n, seed, maxTokens = 2, 7, 6
	single := func(p string, seed int, chat bool) (string, int, int) {
		t.Helper()
		var a answer
		if chat {
			a = decode(t, post(t, hs.URL+"/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"max_tokens":%d,"seed":%d,"temperature":1}`, p, maxTokens, seed)))
			return a.Choices[0].Message.Content, a.Usage.PromptTokens, a.Usage.CompletionTokens
		}
		a = decode(t, post(t, hs.URL+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"seed":%d,"temperature":1}`, p, maxTokens, seed)))
		return *a.Choices[0].Text, a.Usage.PromptTokens, a.Usage.CompletionTokens
	}
	var want []string
	wantPrompt, wantGen := 0, 0
	for _, p := range prompts {
		for k := range n {
			text, pt, gt := single(p, seed+k, false)
			want = append(want, text)
			wantGen += gt
			if k == 0 {
				wantPrompt += pt
			}
		}
	}
	if want[0] == want[1] {
		t.Fatalf("two samples of one prompt under seeds %d and %d agree (%q): the test cannot tell them apart", seed, seed+1, want[0])
	}
	body := fmt.Sprintf(`{"prompt":[%q,%q],"n":%d,"max_tokens":%d,"seed":%d,"temperature":1`, prompts[0], prompts[1], n, maxTokens, seed)
	a := decode(t, post(t, hs.URL+"/v1/completions", body+`}`))
	if len(a.Choices) != len(want) {
		t.Fatalf("%d choices, want %d", len(a.Choices), len(want))
	}
	for i, c := range a.Choices {
		if c.Index != i || *c.Text != want[i] || c.FinishReason == nil {
			t.Errorf("choice %d: index %d text %q finish %v, want %q", i, c.Index, *c.Text, c.FinishReason, want[i])
		}
	}
	if u := a.Usage; u == nil || u.PromptTokens != wantPrompt || u.CompletionTokens != wantGen || u.TotalTokens != wantPrompt+wantGen {
		t.Errorf("usage %+v, want %d prompt and %d completion tokens", u, wantPrompt, wantGen)
	}

	// Streamed: the chunks of each index add up to its text, each index ends once.
	evs, _ := events(t, post(t, hs.URL+"/v1/completions", body+`,"stream":true,"stream_options":{"include_usage":true}}`))
	got := make([]string, len(want))
	ends := map[int]int{}
	var usage int
	for _, e := range evs {
		for _, c := range e.Choices {
			got[c.Index] += *c.Text
			if c.FinishReason != nil {
				ends[c.Index]++
			}
		}
		if e.Usage != nil {
			usage = e.Usage.CompletionTokens
		}
	}
	for i := range want {
		if got[i] != want[i] || ends[i] != 1 {
			t.Errorf("streamed choice %d: %q (finished %d times), want %q", i, got[i], ends[i], want[i])
		}
	}
	if usage != wantGen {
		t.Errorf("streamed usage: %d completion tokens, want %d", usage, wantGen)
	}

	// Chat with n = 2.
	c0, _, _ := single(prompts[0], seed, true)
	c1, _, _ := single(prompts[0], seed+1, true)
	a = decode(t, post(t, hs.URL+"/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"n":2,"max_tokens":%d,"seed":%d,"temperature":1}`, prompts[0], maxTokens, seed)))
	if len(a.Choices) != 2 || a.Choices[0].Message.Content != c0 || a.Choices[1].Message.Content != c1 || a.Choices[1].Index != 1 {
		t.Errorf("chat n=2: %+v, want %q and %q", a.Choices, c0, c1)
	}
	evs, _ = events(t, post(t, hs.URL+"/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"n":2,"max_tokens":%d,"seed":%d,"temperature":1,"stream":true}`, prompts[0], maxTokens, seed)))
	got = make([]string, 2)
	roles := map[int]int{}
	for _, e := range evs {
		for _, c := range e.Choices {
			if c.Delta.Role != nil {
				roles[c.Index]++
			}
			if c.Delta.Content != nil {
				got[c.Index] += *c.Delta.Content
			}
		}
	}
	if got[0] != c0 || got[1] != c1 || roles[0] != 1 || roles[1] != 1 {
		t.Errorf("streamed chat n=2: %q (roles %v), want %q and %q", got, roles, c0, c1)
	}
}
