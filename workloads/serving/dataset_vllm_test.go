package serving

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"llmbench/workloads"
)

const burstCSV = `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,100,20,120,Conversation log
45,GPT-4,12,7,19,Conversation log
46,GPT-4,30,0,30,Conversation log
118,GPT-4,8,3,11,API log
`

func TestBurstGPT(t *testing.T) {
	tok := testTok(t)
	ds, err := LoadDataset(workloads.DatasetSpec{Name: "burstgpt", NumPrompts: 2}, []byte(burstCSV), tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Only the GPT-4 rows with a response: (12, 7) and (8, 3), each once.
	var got []string
	for i, r := range ds.Requests {
		got = append(got, fmt.Sprintf("%d/%d", r.PromptLen, r.OutputLen))
		if len(r.Tokens) != r.PromptLen || r.Tokens[0] != int32(i) || r.Tokens[1] != int32(i+1) {
			t.Errorf("request %d: tokens %v, want (i+j) mod vocab", i, r.Tokens)
		}
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "12/7 8/3" || ds.Skipped != 2 {
		t.Errorf("requests %v skipped %d; want the two GPT-4 rows with a response, 2 skipped", got, ds.Skipped)
	}
	// More prompts than rows: drawn with replacement.
	ds, err = LoadDataset(workloads.DatasetSpec{Name: "burstgpt", NumPrompts: 9}, []byte(burstCSV), tok, 0)
	if err != nil || len(ds.Requests) != 9 {
		t.Fatalf("9 prompts: %v %v", err, ds)
	}
	for _, bad := range []string{"", "Model,Request tokens\nGPT-4,3\n", "Timestamp,Model,Request tokens,Response tokens\n1,GPT-4,x,3\n",
		"Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,3,3\n"} {
		if _, err := LoadDataset(workloads.DatasetSpec{Name: "burstgpt", NumPrompts: 1}, []byte(bad), tok, 0); err == nil {
			t.Errorf("%q loaded", bad)
		}
	}
}

const specBench = `{"question_id": 81, "category": "writing", "turns": ["Write a travel blog post.", "Rewrite it."]}
{"question_id": 82, "category": "math", "turns": ["What is 2+2?"]}
{"question_id": 83, "category": "writing", "turns": ["Draft an email."]}
`

func TestSpecBench(t *testing.T) {
	tok := testTok(t)
	ds, err := LoadDataset(workloads.DatasetSpec{Name: "spec_bench", NumPrompts: 3, DisableShuffle: true}, []byte(specBench), tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, r := range ds.Requests {
		prompts = append(prompts, r.Prompt)
		if r.OutputLen != 256 {
			t.Errorf("output %d; want the default 256", r.OutputLen)
		}
	}
	if strings.Join(prompts, "|") != "Write a travel blog post.|What is 2+2?|Draft an email." {
		t.Errorf("file order with --disable-shuffle: %v", prompts)
	}
	ds, err = LoadDataset(workloads.DatasetSpec{Name: "spec_bench", NumPrompts: 5, SpecBenchCategory: "writing", SpecBenchOutputLen: 32, NoOversample: true}, []byte(specBench), tok, 0)
	if err != nil || len(ds.Requests) != 2 || ds.Requests[0].OutputLen != 32 || ds.Skipped != 1 {
		t.Fatalf("category writing: %v %+v", err, ds)
	}
	if _, err := LoadDataset(workloads.DatasetSpec{Name: "spec_bench", NumPrompts: 1, SpecBenchCategory: "coding"}, []byte(specBench), tok, 0); err == nil || !strings.Contains(err.Error(), "coding") {
		t.Errorf("no question of the category: %v", err)
	}
	if _, err := LoadDataset(workloads.DatasetSpec{Name: "spec_bench", NumPrompts: 1}, []byte(`{"category":"x"}`), tok, 0); err == nil {
		t.Error("a line without turns loaded")
	}
	// Shuffled by default, the same for the same seed, another order for another.
	order := func(seed int64) string {
		ds, err := LoadDataset(workloads.DatasetSpec{Name: "spec_bench", NumPrompts: 3, Seed: seed}, []byte(specBench), tok, 0)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, r := range ds.Requests {
			s = append(s, r.Prompt[:3])
		}
		return strings.Join(s, ",")
	}
	seen := map[string]bool{}
	for seed := range int64(8) {
		if order(seed) != order(seed) {
			t.Fatal("same seed, different order")
		}
		seen[order(seed)] = true
	}
	if len(seen) < 2 {
		t.Errorf("8 seeds gave one order: %v (not shuffled)", seen)
	}
}

func TestTxtSlices(t *testing.T) {
	tok := testTok(t)
	text := "Once upon a time there was a little cat. The cat liked to play in the sun. One day it met a dog."
	ids := tok.Encode(text, false, false)
	ds, err := LoadDataset(workloads.DatasetSpec{Name: "txt-slices", NumPrompts: 6, RandomInputLen: 8, RandomOutputLen: 5}, []byte(text), tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ds.Requests {
		if r.PromptLen != 8 || r.OutputLen != 5 || len(r.Tokens) != 8 {
			t.Fatalf("request %+v: want 8 prompt tokens, 5 output", r)
		}
		// Each slice is consecutive text tokens from some start, wrapping at the end.
		found := false
		for start := range ids {
			ok := true
			for j, id := range r.Tokens {
				ok = ok && ids[(start+j)%len(ids)] == id
			}
			found = found || ok
		}
		if !found {
			t.Fatalf("slice %v is not a run of the text's tokens %v", r.Tokens, ids)
		}
	}
	if _, err := LoadDataset(workloads.DatasetSpec{Name: "txt-slices", NumPrompts: 1}, nil, tok, 0); err == nil {
		t.Error("txt-slices without a file loaded")
	}
}

func TestCustomDisableShuffle(t *testing.T) {
	tok := testTok(t)
	data := []byte("{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n{\"prompt\":\"c\"}\n{\"prompt\":\"d\"}\n")
	ds, err := LoadDataset(workloads.DatasetSpec{Name: "custom", NumPrompts: 4, DisableShuffle: true}, data, tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	for _, r := range ds.Requests {
		s += r.Prompt
	}
	if s != "abcd" {
		t.Errorf("--disable-shuffle order %q", s)
	}
}
