package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
)

var batchExamples = []string{
	"llmbench batch -m synth:llama-1b:Q4_0 --sequence-length 128 --decode-length 8 --batch-size 1,2,4,8,16,32 --runs 3 --warmups 1 -t 2",
	"llmbench batch -m model.gguf -b 1 -b 8 --temperature 0.7 --top-k 40 --export tgi.md,tgi.json",
	"llmbench batch --merge t1.json t2.json > report.md",
	"llmbench batch --backend tgi --url http://localhost:8080 -b 1,4,16   (approximated from streamed tokens)",
}

var batchGroups = []flagGroup{
	{"TGI benchmark compatible", batchFlagNames},
	{"llmbench additions", []string{"t", "threads", "kv-cache-type", "label", "cache-dir", "merge", "backend", "url", "base-url", "tokenizer",
		"export", "data-dir", "device", "sample-interval", "power-limit", "settle-timeout"}},
}

// runBatch is `llmbench batch`: TGI's benchmark on the in-process engine, each run
// prefilling a batch in one step then decoding, printed as TGI's tables, kept in the
// store and exported.
func runBatch(ctx context.Context, args []string) error {
	fs := newFlags("batch", "[-m MODEL] [--sequence-length N] [--decode-length N] [--batch-size N,…] [--runs N] [--warmups N] [--temperature T] [--top-k K] [--top-p P] [--repetition-penalty R] [--do-sample] [-t N] [--label TEXT] [--export FILES]\n"+
		"       llmbench batch --merge A.json B.json …\n"+
		"Each run prefills batch-size prompts of sequence-length tokens in one forward pass, then decodes one token per sequence per pass.", batchExamples, batchGroups...)
	a := defineBatch(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if a.merge {
		if fs.NArg() == 0 {
			return usageErr("batch", errors.New("--merge wants the JSON exports of batch runs: --merge A.json B.json …"))
		}
		return report.TGIMergeFiles(os.Stdout, fs.Args()...)
	}
	if fs.NArg() > 0 {
		return usageErr("batch", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	spec := a.spec
	if spec.Backend != "inproc" { // a server: -m names its model
		if a.model != workloads.BuiltinModel {
			spec.ServerModel = a.model
		}
	} else {
		m, err := jobs.ModelRef(a.model, "")
		if err != nil {
			return usageErr("batch", fmt.Errorf("-m: %w", err))
		}
		spec.Model = m
	}
	spec.Warmups = &a.warmups
	spec.Temperature, spec.TopK, spec.TopP, spec.TypicalP, spec.RepetitionPenalty = a.temp.v, a.topK.v, a.topP.v, a.typical.v, a.rep.v
	limits, err := a.tf.limits()
	if err != nil {
		return usageErr("batch", err)
	}
	job := workloads.Job{Batch: &spec, Device: a.tf.device, PowerLimitW: limits}
	return headless(ctx, "batch", job, a.tf, a.of, func(o *jobs.Options) { o.CacheDir = a.cacheDir }, terminalProgress(), nil)
}
