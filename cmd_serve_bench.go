package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
)

func runServeBench(ctx context.Context, args []string) error {
	fs := newFlags("serve-bench", "[--backend inproc|openai|openai-chat|tgi|llamacpp] [--base-url URL] [-m MODEL] [--dataset-name NAME] [--num-prompts N] [--request-rate R[,R…]] [--max-concurrency N[,N…]] … | --compare A.json B.json",
		serveBenchExamples, serveBenchGroups...)
	a := defineServeBench(fs)
	if err := parse(fs, expandNargs(args)); err != nil {
		return err
	}
	if len(a.compare) > 0 {
		if len(a.compare) != 2 {
			return usageErr("serve-bench", errors.New("--compare needs two result files"))
		}
		return serveBenchCompare(os.Stdout, a.compare[0], a.compare[1])
	}
	if fs.NArg() > 0 {
		return usageErr("serve-bench", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	job, err := a.job(set)
	if err != nil {
		return usageErr("serve-bench", err)
	}
	o := jobs.ServeOptions{ReadyTimeout: time.Duration(a.readyTimeout * float64(time.Second)), NoReadyCheck: a.readyTimeout == 0}
	if o.Headers, err = parseKV(a.headers, "=", "--header"); err != nil {
		return usageErr("serve-bench", err)
	}
	if a.saveResult {
		o.SaveJSON = &a.save
	}
	progress := jobs.ProgressBar
	if set["disable-tqdm"] {
		progress = jobs.ProgressNone
	}
	return headless(ctx, "serve-bench", job, a.tf, a.of, func(jo *jobs.Options) { jo.Serve = o }, progress, nil)
}

// job builds the job the flags describe (set: the flags given), refusing a bad
// combination in one line.
func (a *serveBenchArgs) job(set map[string]bool) (workloads.Job, error) {
	sp, d := a.sp, &a.sp.Dataset
	if a.inputLen > 0 {
		d.RandomInputLen = a.inputLen
	}
	if n := a.outputLen; n > 0 {
		d.RandomOutputLen, d.ShareGPTOutputLen, d.CustomOutputLen, d.PrefixRepetitionOutputLen, d.SonnetOutputLen = n, n, n, n, n
	}
	sp.Temperature, sp.TopP, sp.TopK = a.temp.v, a.topP.v, a.topK.v
	sp.PercentileMetrics = strings.Split(a.pm, ",")
	for _, p := range strings.Split(a.mp, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || v > 100 {
			return workloads.Job{}, fmt.Errorf("--metric-percentiles: bad percentile %q", p)
		}
		sp.MetricPercentiles = append(sp.MetricPercentiles, v)
	}
	if err := a.maps(&sp); err != nil {
		return workloads.Job{}, err
	}
	if err := a.vc.apply(&sp, set); err != nil {
		return workloads.Job{}, err
	}
	rates, concs, err := a.sweep()
	if err != nil {
		return workloads.Job{}, err
	}
	switch {
	case sp.RampUpStrategy != "" && (set["request-rate"] || !set["ramp-up-start-rps"] || !set["ramp-up-end-rps"]):
		return workloads.Job{}, errors.New("with --ramp-up-strategy give --ramp-up-start-rps and --ramp-up-end-rps, and no --request-rate")
	case (d.Name == "random" || d.Name == "prefix_repetition") && d.Path != "":
		return workloads.Job{}, fmt.Errorf("cannot use the %q dataset with --dataset-path", d.Name)
	}
	if d.Name == "random" {
		sp.IgnoreEOS = true // as vLLM: random prompts run to the requested length
	}
	switch sp.Backend {
	case "inproc":
	case "openai", "openai-chat", "tgi", "llamacpp":
		for _, f := range []string{"max-num-seqs", "max-num-batched-tokens", "block-size", "kv-cache-memory", "kv-cache-type", "no-prefix-cache", "c",
			"model-draft", "draft-type", "draft-max", "draft-min", "draft-p-min"} {
			if set[f] {
				return workloads.Job{}, fmt.Errorf("-%s configures the in-process engine: it needs --backend inproc", f)
			}
		}
		sp.Engine = workloads.EngineSpec{}
		sp.BaseURL = strings.TrimRight(cmp.Or(a.baseURL, fmt.Sprintf("http://%s:%d", a.host, a.port)), "/")
		sp.Endpoint = a.endpoint // "" = the backend's default, set by the job
	default:
		return workloads.Job{}, fmt.Errorf("unknown --backend %q (want inproc, openai, openai-chat, tgi or llamacpp)", sp.Backend)
	}
	limits, err := a.tf.limits()
	if err != nil {
		return workloads.Job{}, err
	}
	sp.RequestRate = rates[0] // the sweep's lists set every point's
	job := workloads.Job{Serve: &sp, Device: a.tf.device, PowerLimitW: limits, Sweep: &workloads.Sweep{RequestRate: rates, MaxConcurrency: concs}}
	return job, nil
}

// maps parses the KEY:VALUE and KEY=VALUE lists into sp.
func (a *serveBenchArgs) maps(sp *workloads.ServeSpec) error {
	if len(a.goodput) > 0 {
		g, err := parseKV(a.goodput, ":", "--goodput")
		if err != nil {
			return err
		}
		sp.Goodput = map[string]float64{}
		for k, v := range g {
			f, err := strconv.ParseFloat(v, 64)
			if (k != "ttft" && k != "tpot" && k != "e2el") || err != nil || f < 0 {
				return fmt.Errorf("--goodput %s:%s: want ttft, tpot or e2el and a non-negative number of ms", k, v)
			}
			sp.Goodput[k] = f
		}
	}
	hdr, err := parseKV(a.headers, "=", "--header")
	if err != nil {
		return err
	}
	for k := range hdr {
		sp.HeaderNames = append(sp.HeaderNames, k)
	}
	if len(a.metadata) > 0 {
		if sp.Metadata, err = parseKV(a.metadata, "=", "--metadata"); err != nil {
			return err
		}
	}
	return nil
}

// sweep parses the --request-rate and --max-concurrency lists (nil concurrencies:
// none given).
func (a *serveBenchArgs) sweep() ([]workloads.Rate, []int, error) {
	var rates []workloads.Rate
	for _, r := range strings.Split(a.rates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || !(v > 0) {
			return nil, nil, fmt.Errorf("--request-rate: bad rate %q", r)
		}
		rates = append(rates, workloads.Rate(v))
	}
	if a.concs == "" {
		return rates, nil, nil
	}
	var concs []int
	for _, c := range strings.Split(a.concs, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || v <= 0 {
			return nil, nil, fmt.Errorf("--max-concurrency must be greater than 0, got %q", c)
		}
		concs = append(concs, v)
	}
	return rates, concs, nil
}

// serveBenchCompare prints the comparison of two saved vLLM-style result files.
func serveBenchCompare(w io.Writer, pa, pb string) error {
	a, err := report.ReadVLLMJSON(pa)
	if err != nil {
		return err
	}
	b, err := report.ReadVLLMJSON(pb)
	if err != nil {
		return err
	}
	if err := report.VLLMCompare(w, pa, pb, a, b); err != nil {
		return err
	}
	// The layout people publish A/B tests in (speculative decoding's, issue 15).
	fmt.Fprintln(w)
	return report.ServeABJSON(w, pa, pb, a, b)
}
