package serving

import (
	"os"
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
