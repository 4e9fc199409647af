// Package serving is llmbench's serving load generator: datasets of prompts, an arrival
// schedule (Pacer) with Gamma-distributed gaps sent at absolute times, clients for an
// in-process engine and for OpenAI-compatible, TGI and llama.cpp HTTP servers, and the
// per-request timing that workloads/metrics turns into vLLM's figures.
package serving

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"llmbench/workloads"
)

// Tokenizer counts and makes tokens for datasets; *tokenizer.Tokenizer satisfies it.
type Tokenizer interface {
	Encode(text string, addSpecial, parseSpecial bool) []int32
	Decode(ids []int32) string
	VocabSize() int
}

// Request is one prompt of a dataset.
type Request struct {
	Prompt    string
	Tokens    []int32 // the prompt as token ids when the dataset made them (no BOS)
	PromptLen int     // prompt tokens
	OutputLen int     // output tokens to ask for
}

// Dataset is a loaded set of prompts, plus what was left out.
type Dataset struct {
	Requests []Request
	Skipped  int    // prompts dropped by the dataset's filters or the context limit
	Note     string // one line about what was loaded
	// Oversampled is how many requests repeat a prompt drawn at random (with
	// replacement) to reach --num-prompts when fewer passed the filters, as vLLM does.
	Oversampled int
	// filtered says, for an error, why the dataset's own filters dropped prompts.
	filtered string
}

// LoadDataset builds spec.NumPrompts requests. data is the content of --dataset-path
// (nil when the dataset needs none); ctxLen, when > 0, drops prompts whose prompt plus
// output do not fit in the model's context (counted in Skipped).
func LoadDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer, ctxLen int) (*Dataset, error) {
	if spec.NumPrompts <= 0 {
		return nil, errors.New("dataset: --num-prompts must be positive")
	}
	rng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x5eed))
	ctxSkipped := 0
	var ds *Dataset
	var err error
	switch spec.Name {
	case "random":
		ds, err = randomDataset(spec, tok, rng)
	case "sharegpt":
		ds, err = sharegptDataset(spec, data, tok, rng, ctxLen)
	case "sonnet":
		ds, err = sonnetDataset(spec, data, tok, rng)
	case "prefix_repetition":
		ds, err = prefixRepetitionDataset(spec, tok, rng)
	case "custom":
		ds, err = customDataset(spec, data, tok)
	default:
		return nil, fmt.Errorf("dataset: unknown --dataset-name %q (want sharegpt, sonnet, random, prefix_repetition or custom)", spec.Name)
	}
	if err != nil {
		return nil, err
	}
	if ctxLen > 0 {
		kept := ds.Requests[:0]
		for _, r := range ds.Requests {
			if r.PromptLen+r.OutputLen > ctxLen {
				ds.Skipped++
				ctxSkipped++
				continue
			}
			kept = append(kept, r)
		}
		ds.Requests = kept
	}
	if len(ds.Requests) == 0 {
		msg := fmt.Sprintf("dataset %s: no prompt left after filtering (%d skipped", spec.Name, ds.Skipped)
		if ds.filtered != "" {
			msg += ": " + ds.filtered
		}
		if ctxSkipped > 0 {
			msg += fmt.Sprintf("; %d longer than the model's %d-token context", ctxSkipped, ctxLen)
		}
		return nil, errors.New(msg + ")")
	}
	if n := len(ds.Requests); n < spec.NumPrompts && !spec.NoOversample && (spec.Name == "sharegpt" || spec.Name == "custom") {
		// vLLM's maybe_oversample_requests: random.choices(requests, k=missing), seeded.
		orng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x0e5a))
		for len(ds.Requests) < spec.NumPrompts {
			ds.Requests = append(ds.Requests, ds.Requests[orng.IntN(n)])
		}
		ds.Oversampled = spec.NumPrompts - n
		ds.Note += fmt.Sprintf("; only %d passed the filters, oversampled to %d (%d repeat a prompt drawn at random, as vLLM does; --no-oversample keeps %d)",
			n, spec.NumPrompts, ds.Oversampled, n)
	}
	return ds, nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// randomTokens returns n token ids drawn uniformly from the vocabulary, avoiding the
// lowest ids (control and byte tokens in most vocabularies) when the vocabulary is big
// enough.
func randomTokens(rng *rand.Rand, tok Tokenizer, n int) []int32 {
	v := tok.VocabSize()
	lo := 0
	if v > 1000 {
		lo = 300
	} else if v > 300 {
		lo = 259 // SentencePiece: 3 control + 256 byte tokens
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(lo + rng.IntN(v-lo))
	}
	return out
}

// randomDataset follows vLLM's random dataset: input and output lengths uniform in
// [len·(1−r), len·(1+r)], a shared random prefix, random token ids.
func randomDataset(spec workloads.DatasetSpec, tok Tokenizer, rng *rand.Rand) (*Dataset, error) {
	in, out := orDefault(spec.RandomInputLen, 1024), orDefault(spec.RandomOutputLen, 128)
	r := spec.RandomRangeRatio
	if r < 0 || r >= 1 {
		return nil, fmt.Errorf("dataset random: --random-range-ratio %v must be in [0, 1)", r)
	}
	span := func(n int) (int, int) {
		return max(1, int(math.Floor(float64(n)*(1-r)))), max(1, int(math.Ceil(float64(n)*(1+r))))
	}
	inLo, inHi := span(in)
	outLo, outHi := span(out)
	prefix := randomTokens(rng, tok, spec.RandomPrefixLen)
	ds := &Dataset{Note: fmt.Sprintf("random: input %d..%d (+%d prefix), output %d..%d tokens", inLo, inHi, len(prefix), outLo, outHi)}
	for range spec.NumPrompts {
		n := inLo + rng.IntN(inHi-inLo+1)
		ids := append(append([]int32(nil), prefix...), randomTokens(rng, tok, n)...)
		ds.Requests = append(ds.Requests, Request{
			Prompt: tok.Decode(ids), Tokens: ids, PromptLen: len(ids),
			OutputLen: outLo + rng.IntN(outHi-outLo+1),
		})
	}
	return ds, nil
}

// prefixRepetitionDataset follows vLLM's prefix_repetition dataset: a few shared
// random prefixes, each followed by a unique random suffix.
func prefixRepetitionDataset(spec workloads.DatasetSpec, tok Tokenizer, rng *rand.Rand) (*Dataset, error) {
	pl, sl := orDefault(spec.PrefixRepetitionPrefixLen, 256), orDefault(spec.PrefixRepetitionSuffixLen, 256)
	np, ol := orDefault(spec.PrefixRepetitionNumPrefixes, 10), orDefault(spec.PrefixRepetitionOutputLen, 128)
	prefixes := make([][]int32, np)
	for i := range prefixes {
		prefixes[i] = randomTokens(rng, tok, pl)
	}
	ds := &Dataset{Note: fmt.Sprintf("prefix_repetition: %d prefixes of %d tokens, %d-token suffixes, output %d", np, pl, sl, ol)}
	for i := range spec.NumPrompts {
		ids := append(append([]int32(nil), prefixes[i%np]...), randomTokens(rng, tok, sl)...)
		ds.Requests = append(ds.Requests, Request{Prompt: tok.Decode(ids), Tokens: ids, PromptLen: len(ids), OutputLen: ol})
	}
	rng.Shuffle(len(ds.Requests), func(i, j int) { ds.Requests[i], ds.Requests[j] = ds.Requests[j], ds.Requests[i] })
	return ds, nil
}

// sharegptEntry reads both ShareGPT layouts: {"conversations":[{"from","value"}]}.
type sharegptEntry struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// sharegptDataset follows vLLM: the first human turn is the prompt, the reply's token
// count the output length; prompts of 4..1024 tokens with a total ≤ 2048 (and replies
// of ≥ 4 tokens) are kept. Single-turn entries are used when --sharegpt-output-len is
// given.
func sharegptDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer, rng *rand.Rand, ctxLen int) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset sharegpt: --dataset-path is required")
	}
	var entries []sharegptEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("dataset sharegpt: %w", err)
	}
	fixed := spec.ShareGPTOutputLen
	var usable []sharegptEntry
	for _, e := range entries {
		if len(e.Conversations) >= 2 || (fixed > 0 && len(e.Conversations) >= 1) {
			usable = append(usable, e)
		}
	}
	if len(usable) == 0 {
		return nil, errors.New("dataset sharegpt: no conversation with a reply (single-turn files need --sharegpt-output-len)")
	}
	rng.Shuffle(len(usable), func(i, j int) { usable[i], usable[j] = usable[j], usable[i] })
	ds := &Dataset{}
	var plens []int
	short, shortOut, long, total := 0, 0, 0, 0
	for _, e := range usable {
		if len(ds.Requests) == spec.NumPrompts {
			break
		}
		prompt := e.Conversations[0].Value
		ids := tok.Encode(prompt, false, false)
		var cut []int32 // the prompt cut to the input limit (JetStream's --max-input-length)
		if m := spec.ShareGPTMaxInputLen; m > 0 && len(ids) > m {
			cut = ids[:m]
			prompt, ids = tok.Decode(cut), cut
		}
		pl := len(ids)
		ol := fixed
		if ol <= 0 {
			ol = len(tok.Encode(e.Conversations[1].Value, false, false))
		}
		plens = append(plens, pl)
		switch {
		case pl < 4:
			short++
		case fixed <= 0 && ol < 4:
			shortOut++
		case pl > 1024 && spec.ShareGPTMaxInputLen <= 0:
			long++
		case pl+ol > 2048:
			total++
		default:
			ds.Requests = append(ds.Requests, Request{Prompt: prompt, Tokens: cut, PromptLen: pl, OutputLen: ol})
			continue
		}
		ds.Skipped++
	}
	ds.Note = fmt.Sprintf("sharegpt: %d of %d conversations", len(ds.Requests), len(entries))
	if len(ds.Requests) == 0 && len(plens) > 0 {
		slices.Sort(plens)
		ds.filtered = fmt.Sprintf("vLLM's sharegpt filters keep prompts of 4..1024 tokens, replies of ≥ 4 and prompt+reply ≤ 2048; "+
			"%d prompts under 4 tokens, %d replies under 4, %d prompts over 1024, %d prompt+reply over 2048; the median prompt is %d tokens "+
			"by this tokenizer. Token counts depend on the tokenizer: give --tokenizer FILE.gguf with the served model's "+
			"(a small-vocabulary tokenizer counts many more tokens), or use --dataset-name random",
			short, shortOut, long, total, plens[len(plens)/2])
	}
	return ds, nil
}

// sonnetDataset follows vLLM's sonnet dataset: a fixed instruction, a prefix of the
// poem's first lines shared by every prompt, then randomly chosen lines up to the
// input length.
func sonnetDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer, rng *rand.Rand) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset sonnet: --dataset-path is required")
	}
	in, out, pre := orDefault(spec.SonnetInputLen, 550), orDefault(spec.SonnetOutputLen, 150), orDefault(spec.SonnetPrefixLen, 200)
	var lines []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, errors.New("dataset sonnet: empty file")
	}
	const base = "Pick as many lines as you can from these poem lines:\n"
	baseLen := len(tok.Encode(base, false, false))
	total := 0
	for _, l := range lines {
		total += len(tok.Encode(l, false, false))
	}
	avg := float64(total) / float64(len(lines))
	if in <= baseLen || pre < baseLen || in < pre {
		return nil, fmt.Errorf("dataset sonnet: need --sonnet-input-len (%d) ≥ --sonnet-prefix-len (%d) > the instruction's %d tokens", in, pre, baseLen)
	}
	nPrefix := min(len(lines), int(math.Round(float64(pre-baseLen)/avg)))
	nInput := int(math.Round(float64(in-baseLen) / avg))
	prefix := strings.Join(lines[:nPrefix], "")
	ds := &Dataset{Note: fmt.Sprintf("sonnet: %d prefix lines + %d sampled, output %d", nPrefix, max(0, nInput-nPrefix), out)}
	for range spec.NumPrompts {
		var b strings.Builder
		b.WriteString(base)
		b.WriteString(prefix)
		for range max(0, nInput-nPrefix) {
			b.WriteString(lines[rng.IntN(len(lines))])
		}
		p := b.String()
		ds.Requests = append(ds.Requests, Request{Prompt: p, PromptLen: len(tok.Encode(p, false, false)), OutputLen: out})
	}
	return ds, nil
}

// customDataset reads JSONL: one {"prompt": …, "output_tokens": …} per line
// ("output_tokens" falls back to --custom-output-len, default 256).
func customDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset custom: --dataset-path is required")
	}
	ds := &Dataset{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() && len(ds.Requests) < spec.NumPrompts {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e struct {
			Prompt       string `json:"prompt"`
			OutputTokens int    `json:"output_tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("dataset custom: line %d: %w", line, err)
		}
		if e.Prompt == "" {
			ds.Skipped++
			continue
		}
		ol := e.OutputTokens
		if ol <= 0 {
			ol = orDefault(spec.CustomOutputLen, 256)
		}
		ds.Requests = append(ds.Requests, Request{Prompt: e.Prompt, PromptLen: len(tok.Encode(e.Prompt, false, false)), OutputLen: ol})
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("dataset custom: %w", err)
	}
	ds.Note = fmt.Sprintf("custom: %d prompts", len(ds.Requests))
	return ds, nil
}
