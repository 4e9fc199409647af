// Package serving is llmbench's serving load generator: datasets of prompts, an arrival
// schedule (Pacer) with Gamma-distributed gaps sent at absolute times, clients for an
// in-process engine and for OpenAI-compatible, TGI and llama.cpp HTTP servers, and the
// per-request timing that workloads/metrics turns into vLLM's figures.
package serving

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
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
// DatasetNames are the --dataset-name values LoadDataset knows (vLLM's names).
var DatasetNames = []string{"sharegpt", "burstgpt", "sonnet", "random", "prefix_repetition", "custom", "spec_bench", "txt-slices"}

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
	case "burstgpt":
		ds, err = burstGPTDataset(spec, data, tok, rng)
	case "spec_bench":
		ds, err = specBenchDataset(spec, data, tok)
	case "txt-slices":
		ds, err = txtSlicesDataset(spec, data, tok, rng)
	default:
		return nil, fmt.Errorf("dataset: unknown --dataset-name %q (want %s)", spec.Name, strings.Join(DatasetNames, ", "))
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
	if n := len(ds.Requests); n < spec.NumPrompts && !spec.NoOversample && (spec.Name == "sharegpt" || spec.Name == "custom" || spec.Name == "spec_bench") {
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
	if !spec.DisableShuffle {
		rng.Shuffle(len(usable), func(i, j int) { usable[i], usable[j] = usable[j], usable[i] })
	}
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
// ("output_tokens" falls back to --custom-output-len, default 256), shuffled with the
// seed as vLLM does unless --disable-shuffle, the first --num-prompts kept.
func customDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset custom: --dataset-path is required")
	}
	type entry struct {
		Prompt       string `json:"prompt"`
		OutputTokens int    `json:"output_tokens"`
	}
	var entries []entry
	ds := &Dataset{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("dataset custom: line %d: %w", line, err)
		}
		if e.Prompt == "" {
			ds.Skipped++
			continue
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("dataset custom: %w", err)
	}
	if !spec.DisableShuffle {
		srng := rand.New(rand.NewPCG(uint64(spec.Seed), 0xc057))
		srng.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	}
	for _, e := range entries[:min(len(entries), spec.NumPrompts)] {
		ol := e.OutputTokens
		if ol <= 0 {
			ol = orDefault(spec.CustomOutputLen, 256)
		}
		ds.Requests = append(ds.Requests, Request{Prompt: e.Prompt, PromptLen: len(tok.Encode(e.Prompt, false, false)), OutputLen: ol})
	}
	ds.Note = fmt.Sprintf("custom: %d prompts", len(ds.Requests))
	return ds, nil
}

// burstGPTDataset follows vLLM's burstgpt dataset over the BurstGPT CSV: rows of model
// GPT-4 with a positive response token count, num_prompts of them drawn at random
// (with replacement when the file has fewer), each a synthetic prompt of its Request
// tokens (token ids (i + j) mod vocabulary) asking for its Response tokens.
func burstGPTDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer, rng *rand.Rand) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset burstgpt: --dataset-path is required (BurstGPT's CSV)")
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("dataset burstgpt: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("dataset burstgpt: empty file")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range []string{"Model", "Request tokens", "Response tokens"} {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("dataset burstgpt: no %q column (BurstGPT's CSV has Timestamp, Model, Request tokens, Response tokens, …)", h)
		}
	}
	type row struct{ in, out int }
	var kept []row
	skipped := 0
	for i, r := range rows[1:] {
		if len(r) <= max(col["Model"], col["Request tokens"], col["Response tokens"]) {
			return nil, fmt.Errorf("dataset burstgpt: line %d: %d fields", i+2, len(r))
		}
		in, err1 := strconv.ParseFloat(strings.TrimSpace(r[col["Request tokens"]]), 64)
		out, err2 := strconv.ParseFloat(strings.TrimSpace(r[col["Response tokens"]]), 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("dataset burstgpt: line %d: token counts %q, %q", i+2, r[col["Request tokens"]], r[col["Response tokens"]])
		}
		if strings.TrimSpace(r[col["Model"]]) != "GPT-4" || out <= 0 {
			skipped++
			continue
		}
		kept = append(kept, row{int(in), int(out)})
	}
	if len(kept) == 0 {
		return &Dataset{Skipped: skipped, filtered: "vLLM's burstgpt keeps rows of model GPT-4 with Response tokens > 0"}, nil
	}
	pick := rng.Perm(len(kept))
	ds := &Dataset{Skipped: skipped, Note: fmt.Sprintf("burstgpt: %d GPT-4 rows of %d", len(kept), len(rows)-1)}
	vocab := tok.VocabSize()
	for i := range spec.NumPrompts {
		var r row
		if spec.NumPrompts <= len(kept) {
			r = kept[pick[i]]
		} else {
			r = kept[rng.IntN(len(kept))] // with replacement, as vLLM's sample(replace=True)
		}
		ids := make([]int32, r.in)
		for j := range ids {
			ids[j] = int32((i + j) % vocab)
		}
		ds.Requests = append(ds.Requests, Request{Prompt: tok.Decode(ids), Tokens: ids, PromptLen: r.in, OutputLen: r.out})
	}
	return ds, nil
}

// specBenchDataset follows vLLM's spec_bench dataset over Spec-Bench's question.jsonl:
// each line's first turn is a prompt, kept when --spec-bench-category is empty or
// names its category, shuffled with the seed unless --disable-shuffle, each asking
// for --spec-bench-output-len tokens (default 256).
func specBenchDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset spec_bench: --dataset-path is required (Spec-Bench's question.jsonl)")
	}
	out := orDefault(spec.SpecBenchOutputLen, 256)
	var prompts []string
	skipped, line := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e struct {
			Category string   `json:"category"`
			Turns    []string `json:"turns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("dataset spec_bench: line %d: %w", line, err)
		}
		if len(e.Turns) == 0 {
			return nil, fmt.Errorf("dataset spec_bench: line %d: no \"turns\"", line)
		}
		if spec.SpecBenchCategory != "" && e.Category != spec.SpecBenchCategory {
			skipped++
			continue
		}
		prompts = append(prompts, e.Turns[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dataset spec_bench: %w", err)
	}
	if !spec.DisableShuffle {
		srng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x5bec))
		srng.Shuffle(len(prompts), func(i, j int) { prompts[i], prompts[j] = prompts[j], prompts[i] })
	}
	ds := &Dataset{Skipped: skipped, Note: fmt.Sprintf("spec_bench: %d questions, output %d", len(prompts), out)}
	if spec.SpecBenchCategory != "" {
		ds.filtered = fmt.Sprintf("no question of category %q", spec.SpecBenchCategory)
	}
	for _, p := range prompts[:min(len(prompts), spec.NumPrompts)] {
		ds.Requests = append(ds.Requests, Request{Prompt: p, PromptLen: len(tok.Encode(p, false, false)), OutputLen: out})
	}
	return ds, nil
}

// txtSlicesDataset follows vLLM's txt-slices dataset: the text file tokenized once,
// each prompt a slice of --random-input-len tokens from a random start (wrapping at
// the end), asking for --random-output-len tokens; --random-range-ratio spreads both
// as for the random dataset.
func txtSlicesDataset(spec workloads.DatasetSpec, data []byte, tok Tokenizer, rng *rand.Rand) (*Dataset, error) {
	if data == nil {
		return nil, errors.New("dataset txt-slices: --dataset-path is required (a text file)")
	}
	ids := tok.Encode(string(data), false, false)
	if len(ids) == 0 {
		return nil, errors.New("dataset txt-slices: the text has no tokens")
	}
	in, out := orDefault(spec.RandomInputLen, 1024), orDefault(spec.RandomOutputLen, 128)
	r := spec.RandomRangeRatio
	if r < 0 || r >= 1 {
		return nil, fmt.Errorf("dataset txt-slices: --random-range-ratio %v must be in [0, 1)", r)
	}
	span := func(n int) (int, int) {
		return max(1, int(math.Floor(float64(n)*(1-r)))), max(1, int(math.Ceil(float64(n)*(1+r))))
	}
	inLo, inHi := span(in)
	outLo, outHi := span(out)
	ds := &Dataset{Note: fmt.Sprintf("txt-slices: %d-token text, input %d..%d, output %d..%d tokens", len(ids), inLo, inHi, outLo, outHi)}
	for range spec.NumPrompts {
		n := inLo + rng.IntN(inHi-inLo+1)
		start := rng.IntN(len(ids))
		p := make([]int32, n)
		for j := range p {
			p[j] = ids[(start+j)%len(ids)]
		}
		ds.Requests = append(ds.Requests, Request{Prompt: tok.Decode(p), Tokens: p, PromptLen: n, OutputLen: outLo + rng.IntN(outHi-outLo+1)})
	}
	return ds, nil
}
