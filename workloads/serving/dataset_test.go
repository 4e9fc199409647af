package serving

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/gguf"
	"llmbench/engine/tokenizer"
	"llmbench/workloads"
)

func testTok(t *testing.T) Tokenizer {
	t.Helper()
	f, err := gguf.Parse(builtin.Stories260K)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestDatasets(t *testing.T) {
	tok := testTok(t)
	sonnet, err := os.ReadFile("testdata/sonnet.txt")
	if err != nil {
		t.Fatal(err)
	}
	share, _ := os.ReadFile("../../../shared/datasets/sharegpt_sample_50.json")
	share500, _ := os.ReadFile("../../../shared/datasets/ShareGPT_V3_filtered_500.json")
	cases := []struct {
		name string
		spec workloads.DatasetSpec
		data []byte
		ok   bool
	}{
		{"random", workloads.DatasetSpec{Name: "random", NumPrompts: 20, RandomInputLen: 32, RandomOutputLen: 8, RandomRangeRatio: 0.25, RandomPrefixLen: 4}, nil, true},
		{"random-bad-ratio", workloads.DatasetSpec{Name: "random", NumPrompts: 2, RandomRangeRatio: 1.5}, nil, false},
		{"prefix_repetition", workloads.DatasetSpec{Name: "prefix_repetition", NumPrompts: 10, PrefixRepetitionPrefixLen: 8, PrefixRepetitionSuffixLen: 4, PrefixRepetitionNumPrefixes: 2, PrefixRepetitionOutputLen: 3}, nil, true},
		{"sonnet", workloads.DatasetSpec{Name: "sonnet", NumPrompts: 5, SonnetInputLen: 550, SonnetOutputLen: 150, SonnetPrefixLen: 200}, sonnet, true},
		{"sonnet-no-path", workloads.DatasetSpec{Name: "sonnet", NumPrompts: 5}, nil, false},
		{"custom", workloads.DatasetSpec{Name: "custom", NumPrompts: 5}, []byte("{\"prompt\":\"hello there\",\"output_tokens\":7}\n\n{\"prompt\":\"again\"}\n"), true},
		{"custom-bad", workloads.DatasetSpec{Name: "custom", NumPrompts: 5}, []byte("{nope\n"), false},
		{"unknown", workloads.DatasetSpec{Name: "hf", NumPrompts: 5}, nil, false},
		{"sharegpt-garbage", workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 5}, []byte("[1,2"), false},
	}
	if share != nil {
		cases = append(cases, struct {
			name string
			spec workloads.DatasetSpec
			data []byte
			ok   bool
		}{"sharegpt-all-over-1024-tokens", workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 10}, share, false}) // vLLM's ≤ 1024-token prompt filter drops all 50
	}
	if share500 != nil {
		cases = append(cases, struct {
			name string
			spec workloads.DatasetSpec
			data []byte
			ok   bool
		}{"sharegpt-single-turn-needs-output-len", workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 10}, share500, false},
			struct {
				name string
				spec workloads.DatasetSpec
				data []byte
				ok   bool
			}{"sharegpt-single-turn", workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 10, ShareGPTOutputLen: 32}, share500, true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := LoadDataset(c.spec, c.data, tok, 0)
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if err != nil {
				return
			}
			for _, r := range ds.Requests {
				if r.Prompt == "" || r.PromptLen <= 0 || r.OutputLen <= 0 {
					t.Errorf("bad request %+v", r)
				}
			}
			if c.name == "random" {
				for _, r := range ds.Requests {
					if r.PromptLen < 4+24 || r.PromptLen > 4+40 || r.OutputLen < 6 || r.OutputLen > 10 {
						t.Errorf("random lengths %d/%d out of range", r.PromptLen, r.OutputLen)
					}
				}
			}
			again, _ := LoadDataset(c.spec, c.data, tok, 0)
			if again.Requests[0].Prompt != ds.Requests[0].Prompt {
				t.Error("not reproducible with the same seed")
			}
		})
	}
	// The context limit drops prompts and counts them.
	ds, err := LoadDataset(workloads.DatasetSpec{Name: "random", NumPrompts: 10, RandomInputLen: 100, RandomOutputLen: 10, RandomRangeRatio: 0.5}, nil, tok, 110)
	if err != nil || ds.Skipped == 0 || len(ds.Requests)+ds.Skipped != 10 {
		t.Errorf("context filter: %v, skipped %d", err, ds.Skipped)
	}
}

// TestShareGPTOversample: when fewer conversations than --num-prompts pass vLLM's
// filters, the dataset repeats prompts drawn at random (seeded, with replacement) to
// reach --num-prompts and says so, as vLLM's maybe_oversample_requests; --no-oversample
// keeps what passed.
func TestShareGPTOversample(t *testing.T) {
	tok := testTok(t)
	var convs []string
	for i := range 5 {
		convs = append(convs, fmt.Sprintf(`{"conversations":[{"from":"human","value":"tell me a story about a cat number %d please"},{"from":"gpt","value":"once upon a time there was a cat that liked %d fish"}]}`, i, i))
	}
	convs = append(convs, `{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"hello there, how are you today"}]}`) // prompt < 4 tokens
	data := []byte("[" + strings.Join(convs, ",") + "]")
	spec := workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 12, Seed: 3}
	ds, err := LoadDataset(spec, data, tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Requests) != 12 || ds.Oversampled != 7 || ds.Skipped != 1 || !strings.Contains(ds.Note, "oversampled to 12") {
		t.Fatalf("%d requests, %d oversampled, %d skipped, note %q", len(ds.Requests), ds.Oversampled, ds.Skipped, ds.Note)
	}
	seen := map[string]bool{}
	for _, r := range ds.Requests[:5] {
		seen[r.Prompt] = true
	}
	for _, r := range ds.Requests[5:] {
		if !seen[r.Prompt] {
			t.Errorf("oversampled prompt %q is not one that passed the filters", r.Prompt)
		}
	}
	again, _ := LoadDataset(spec, data, tok, 0)
	for i := range again.Requests {
		if again.Requests[i].Prompt != ds.Requests[i].Prompt {
			t.Fatal("oversampling is not seeded")
		}
	}
	spec.NoOversample = true
	if ds, err := LoadDataset(spec, data, tok, 0); err != nil || len(ds.Requests) != 5 || ds.Oversampled != 0 {
		t.Errorf("--no-oversample: %v, %d requests", err, len(ds.Requests))
	}
}

// TestShareGPTAllFilteredMessage: the sample's prompts are ~1000 tokens by their
// authors' tokenizer and over 1024 by the built-in one, so every prompt is dropped; the
// error says which filter dropped them and what to do, instead of a run of nothing.
func TestShareGPTAllFilteredMessage(t *testing.T) {
	share, err := os.ReadFile("../../../shared/datasets/sharegpt_sample_50.json")
	if err != nil {
		t.Skip("shared sharegpt sample not present")
	}
	_, err = LoadDataset(workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 10}, share, testTok(t), 0)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"no prompt left", "over 1024", "median prompt", "--tokenizer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	t.Log(err)
}

// TestShareGPTMaxInputLen: with a max input length, a prompt over it is cut to its
// first tokens (the ids are kept, the text is their decoding) instead of dropped; a
// shorter prompt is left as it is.
func TestShareGPTMaxInputLen(t *testing.T) {
	tok := testTok(t)
	long := strings.Repeat("the cat sat on the mat and looked at the dog. ", 150)
	data := []byte(`[{"conversations":[{"from":"human","value":"` + long + `"},{"from":"gpt","value":"yes"}]},` +
		`{"conversations":[{"from":"human","value":"tell me a story about a cat"},{"from":"gpt","value":"no"}]}]`)
	spec := workloads.DatasetSpec{Name: "sharegpt", NumPrompts: 2, ShareGPTOutputLen: 16, ShareGPTMaxInputLen: 50, NoOversample: true}
	ds, err := LoadDataset(spec, data, tok, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Requests) != 2 || ds.Skipped != 0 {
		t.Fatalf("%d requests, %d skipped", len(ds.Requests), ds.Skipped)
	}
	full := tok.Encode(long, false, false)
	for _, r := range ds.Requests {
		switch {
		case r.Tokens != nil:
			if r.PromptLen != 50 || len(r.Tokens) != 50 || !slices.Equal(r.Tokens, full[:50]) || r.Prompt != tok.Decode(full[:50]) {
				t.Errorf("cut prompt: %d tokens (PromptLen %d), text %q", len(r.Tokens), r.PromptLen, r.Prompt)
			}
		case r.Prompt != "tell me a story about a cat" || r.PromptLen >= 50:
			t.Errorf("short prompt changed: %q (%d tokens)", r.Prompt, r.PromptLen)
		}
		if r.OutputLen != 16 {
			t.Errorf("output length %d", r.OutputLen)
		}
	}
	spec.ShareGPTMaxInputLen = 0
	if ds, err := LoadDataset(spec, data, tok, 0); err != nil || len(ds.Requests) != 1 {
		t.Errorf("without the limit the long prompt is vLLM's to drop: %v, %d requests", err, len(ds.Requests))
	}
}
