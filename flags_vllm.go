package main

// vllm bench serve's flags beyond flags_serve_bench.go's: more sampling parameters,
// request shaping, TLS, the timeline plot, the spec_bench dataset's options, and the
// flags that cannot apply (accepted with a note, or refused in one line). The pinned
// vLLM version and every flag's status are in docs/COMPATIBILITY.md.

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"llmbench/workloads"
)

// vllmFlags are the vllm bench serve flags defineVLLM adds.
type vllmFlags struct {
	minP, freqPen, presPen, repPen optFloat
	logprobs                       optInt
	thresholds                     string
	noEffect                       map[string]*string // flag → value, accepted with no effect
	noEffectBool                   map[string]*bool
	refused                        map[string]*string
	refusedBool                    map[string]*bool
	loraModules                    listFlag
}

// vllmNoEffect are vLLM flags llmbench accepts but cannot act on, with the reason the
// note gives.
var vllmNoEffect = map[string]string{
	"tokenizer-mode":                     "tokenizers come from GGUF files",
	"trust-remote-code":                  "nothing is loaded from the Hugging Face hub",
	"skip-tokenizer-init":                "the tokenizer is a GGUF file read once",
	"skip-chat-template":                 "llmbench never applies a chat template client-side (it always sends the dataset's prompt as written)",
	"chat-template-kwargs":               "llmbench never applies a chat template client-side",
	"no-stream":                          "it is vLLM's switch for streaming Hugging Face datasets; local files are read whole; for non-streaming requests give --non-streaming",
	"self-timed":                         "it concerns the timed_trace dataset, which llmbench does not have",
	"no-self-timed":                      "it concerns the timed_trace dataset, which llmbench does not have",
	"hf-subset":                          "Hugging Face hub datasets are not loaded (no network)",
	"hf-split":                           "Hugging Face hub datasets are not loaded (no network)",
	"hf-name":                            "Hugging Face hub datasets are not loaded (no network)",
	"hf-output-len":                      "Hugging Face hub datasets are not loaded (no network)",
	"blazedit-min-distance":              "the blazedit dataset is a Hugging Face hub dataset",
	"blazedit-max-distance":              "the blazedit dataset is a Hugging Face hub dataset",
	"random-batch-size":                  "it batches embedding requests; llmbench benchmarks generation",
	"no-reranker":                        "it concerns reranker models; llmbench benchmarks generation",
	"random-mm-base-items-per-request":   "multimodal datasets are not supported (text models only)",
	"random-mm-num-mm-items-range-ratio": "multimodal datasets are not supported (text models only)",
	"random-mm-limit-mm-per-prompt":      "multimodal datasets are not supported (text models only)",
	"random-mm-bucket-config":            "multimodal datasets are not supported (text models only)",
}

// vllmRefused are vLLM flags whose effect llmbench cannot give: a run with them would
// measure something else, so they are refused with the reason.
var vllmRefused = map[string]string{
	"use-beam-search":    "beam search is not in llmbench's engine (nor in vLLM's V1 engine)",
	"profile":            "vLLM's torch profiler endpoints do not exist on other servers",
	"lora-modules":       "LoRA adapters are not supported",
	"lora-assignment":    "LoRA adapters are not supported",
	"probe-request-rate": "probe requests are not implemented",
	"plot-dataset-stats": "the dataset statistics figure is not implemented (the dataset note gives the lengths)",
}

// vllmBoolFlags are the flags above that take no value.
var vllmBoolFlags = map[string]bool{"trust-remote-code": true, "skip-tokenizer-init": true, "skip-chat-template": true, "no-stream": true,
	"self-timed": true, "no-self-timed": true, "no-reranker": true, "use-beam-search": true, "profile": true, "plot-dataset-stats": true}

// vllmGroupNames are the flags defineVLLM adds, for the help's groups.
var vllmGroupNames = []string{"min-p", "frequency-penalty", "presence-penalty", "repetition-penalty", "logprobs", "extra-body", "request-id-prefix",
	"insecure", "disable-shuffle", "plot-timeline", "timeline-itl-thresholds", "spec-bench-output-len", "spec-bench-category"}

// defineVLLM defines vllm bench serve's remaining flags on fs, filling sp.
func defineVLLM(fs *flag.FlagSet, sp *workloads.ServeSpec) *vllmFlags {
	v := &vllmFlags{noEffect: map[string]*string{}, noEffectBool: map[string]*bool{}, refused: map[string]*string{}, refusedBool: map[string]*bool{}}
	o, d := &sp.RequestOptions, &sp.Dataset
	fs.Var(&v.minP, "min-p", "min-p sampling parameter (sent when given)")
	fs.Var(&v.freqPen, "frequency-penalty", "frequency penalty (sent when given)")
	fs.Var(&v.presPen, "presence-penalty", "presence penalty (sent when given)")
	fs.Var(&v.repPen, "repetition-penalty", "repetition penalty (sent when given; llama.cpp's repeat_penalty)")
	fs.Var(&v.logprobs, "logprobs", "log-probabilities per token to ask for (completions: logprobs N; chat: logprobs with top_logprobs N)")
	fs.StringVar(&o.ExtraBody, "extra-body", "", "JSON object whose members are added to every request body, replacing those of the same name")
	fs.StringVar(&o.RequestIDPrefix, "request-id-prefix", "", "send x-request-id: PREFIX + the request's index (vLLM's default is bench-RANDOM-; empty sends none)")
	fs.BoolVar(&o.Insecure, "insecure", false, "accept any TLS certificate of an https server (self-signed)")
	fs.BoolVar(&d.DisableShuffle, "disable-shuffle", false, "keep the dataset file's order (sharegpt, custom, spec_bench)")
	fs.BoolVar(&o.PlotTimeline, "plot-timeline", false, "write an HTML timeline of the requests (send, first token, each gap) beside the result JSON")
	fs.StringVar(&v.thresholds, "timeline-itl-thresholds", "25,50", "`LOW,HIGH` ms: inter-token gaps below LOW green, below HIGH orange, else red")
	fs.IntVar(&d.SpecBenchOutputLen, "spec-bench-output-len", 256, "spec_bench: output tokens per request")
	fs.StringVar(&d.SpecBenchCategory, "spec-bench-category", "", "spec_bench: keep only this category (default all)")
	for name, why := range vllmNoEffect {
		if vllmBoolFlags[name] {
			v.noEffectBool[name] = fs.Bool(name, false, "accepted, no effect: "+why)
		} else {
			v.noEffect[name] = fs.String(name, "", "accepted, no effect: "+why)
		}
	}
	for name, why := range vllmRefused {
		switch {
		case vllmBoolFlags[name]:
			v.refusedBool[name] = fs.Bool(name, false, "refused: "+why)
		case name == "lora-modules":
			fs.Var(&v.loraModules, name, "refused: "+why)
		default:
			v.refused[name] = fs.String(name, "", "refused: "+why)
		}
	}
	return v
}

// apply completes sp from the flags (set: the flags given): the optional numbers,
// the thresholds, --backend vllm, the refusals and the notes of flags with no effect.
func (v *vllmFlags) apply(sp *workloads.ServeSpec, set map[string]bool) error {
	for name, why := range vllmRefused {
		if set[name] {
			return fmt.Errorf("--%s: %s", name, why)
		}
	}
	o := &sp.RequestOptions
	o.MinP, o.FrequencyPenalty, o.PresencePenalty, o.RepetitionPenalty, o.Logprobs = v.minP.v, v.freqPen.v, v.presPen.v, v.repPen.v, v.logprobs.v
	if set["timeline-itl-thresholds"] {
		parts := strings.Split(v.thresholds, ",")
		if len(parts) != 2 {
			return fmt.Errorf("--timeline-itl-thresholds %q: want two values in ms, LOW,HIGH", v.thresholds)
		}
		for _, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return fmt.Errorf("--timeline-itl-thresholds %q: want two numbers of ms", v.thresholds)
			}
			o.TimelineITLThresholdsMs = append(o.TimelineITLThresholdsMs, f)
		}
	}
	if sp.Backend == "vllm" { // vLLM's name for its OpenAI completions client
		sp.Backend = "openai"
		if sp.Label == "" {
			sp.Label = "vllm"
		}
	}
	switch sp.Dataset.Name {
	case "hf", "random-mm", "random-rerank":
		return fmt.Errorf("--dataset-name %s: not available (Hugging Face hub and multimodal or reranking datasets); local ones: sharegpt, burstgpt, sonnet, random, prefix_repetition, custom, spec_bench, txt-slices", sp.Dataset.Name)
	}
	var notes []string
	for name, why := range vllmNoEffect {
		if set[name] {
			notes = append(notes, fmt.Sprintf("--%s (%s)", name, why))
		}
	}
	if len(notes) > 0 {
		sort.Strings(notes)
		fmt.Fprintf(os.Stderr, "llmbench serve-bench: note: accepted with no effect: %s\n", strings.Join(notes, "; "))
	}
	return o.ValidateRequestOptions()
}
