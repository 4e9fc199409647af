package profiles

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"llmbench/engine"
	"llmbench/engine/synth"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/report"
	"llmbench/workloads/serving"
)

// Every value of a profile is checked when it is loaded, before anything runs, and a
// bad one is reported as FILE:LINE: run "NAME": KEY: what is wrong, with LINE the
// line of KEY in the file (the nearest enclosing key when KEY was left to its
// default).

// problem is a value of a run that cannot run: the path of its key inside the run
// ("bench.models.0.type", "" for the run itself) and what is wrong.
type problem struct {
	path string
	msg  string
}

func bad(path, format string, args ...any) *problem {
	return &problem{path: path, msg: fmt.Sprintf(format, args...)}
}

// key is the path as a user reads it: "bench.models[0].type".
func (p *problem) key() string {
	var b strings.Builder
	for i, seg := range strings.Split(p.path, ".") {
		if _, err := strconv.Atoi(seg); err == nil {
			fmt.Fprintf(&b, "[%s]", seg)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// locate returns the line of the key at path inside the run node n: the key's own
// line, a list item's line, else the nearest enclosing key's (n's line for "").
func locate(n *yaml.Node, path string) int {
	line := n.Line
	if path == "" {
		return line
	}
	for _, seg := range strings.Split(path, ".") {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
			if next == nil {
				return line
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

// runError formats a problem of run r (whose node is n) of file name.
func runError(name string, n *yaml.Node, r *Run, p *problem) error {
	where := "run"
	if r.Name != "" {
		where = fmt.Sprintf("run %q", r.Name)
	}
	line := 0
	if n != nil {
		line = locate(n, p.path)
	}
	msg := where + ": "
	if p.path != "" {
		msg += p.key() + ": "
	}
	msg += p.msg
	switch {
	case name != "" && line > 0:
		return fmt.Errorf("%s:%d: %s", name, line, msg)
	case name != "":
		return fmt.Errorf("%s: %s", name, msg)
	}
	return fmt.Errorf("%s", msg)
}

// check reports the first value of r that cannot run, defaults applied.
func runCheck(r *Run) *problem {
	switch n := btoi(r.Bench != nil) + btoi(r.Serve != nil) + btoi(r.Kernels != nil) + btoi(r.Batch != nil) + btoi(r.Throughput != nil); {
	case n == 0:
		return bad("", "give bench:, serve:, kernels:, batch: or throughput:")
	case n > 1:
		return bad("", "give one of bench:, serve:, kernels:, batch: and throughput:, not several")
	}
	switch r.Device {
	case "", "auto", "nvml", "fake", "none":
	default:
		return bad("device", "%q is not auto, nvml, fake or none", r.Device)
	}
	for i, w := range r.PowerLimitW {
		if !(w > 0) || math.IsInf(w, 0) {
			return bad(fmt.Sprintf("power_limit_w.%d", i), "%g is not a positive number of watts", w)
		}
	}
	if r.Bench != nil {
		if r.Sweep != nil {
			return bad("sweep", "sweep: is for serve runs; a bench sweeps its own lists (n_prompt, n_threads, …)")
		}
		if len(r.Bench.Models) == 0 {
			r.Bench.Models = []workloads.BenchModel{{Path: BuiltinModel}}
		}
		return checkBench(r.Bench)
	}
	if r.Throughput != nil {
		if r.Sweep != nil {
			return bad("sweep", "sweep: is for serve runs; a throughput run has its rows (weights_types)")
		}
		if err := r.Throughput.Validate(); err != nil {
			return bad("throughput", "%s", strings.NewReplacer("--batch-size", "batch_size", "--max-cache-length", "max_cache_length",
				"--max-input-length", "max_input_length", "--max-output-length", "max_output_length", "--num-prompts", "num_prompts",
				"--dataset-path", "dataset_path", "--weights-type", "weights_types", "--kv-cache-type", "kv_cache_types", "-t", "threads").Replace(err.Error()))
		}
		return nil
	}
	if r.Kernels != nil {
		if r.Sweep != nil || len(r.PowerLimitW) > 0 {
			return bad("sweep", "sweep: and power_limit_w: are for serve and bench runs, not kernels")
		}
		if err := kernelbench.Validate(*r.Kernels); err != nil {
			return bad("kernels", "%s", strings.NewReplacer("--seq-len", "seq_len", "--head-dim", "head_dim", "--block-size", "block_size",
				"--prefix-len", "prefix_len", "--cases", "cases", "--suite", "suite", "-r", "repetitions", "-t", "threads", "--", "").Replace(err.Error()))
		}
		return nil
	}
	if r.Batch != nil {
		if r.Sweep != nil || len(r.PowerLimitW) > 0 {
			return bad("sweep", "sweep: and power_limit_w: are for serve and bench runs, not batch")
		}
		if err := r.Batch.WithDefaults().Validate(); err != nil {
			return bad("batch", "%s", err)
		}
		if m := r.Batch.Model; m.Shape != "" {
			if _, err := synth.Lookup(m.Shape); err != nil {
				return bad("batch.model.shape", "%s", strings.TrimPrefix(err.Error(), "synth: "))
			}
			if _, err := synth.ParseFileType(m.Type); err != nil {
				return bad("batch.model.type", "%s", strings.TrimPrefix(err.Error(), "synth: "))
			}
		}
		return nil
	}
	return runCheckServe(r)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkBench checks a bench section value by value.
func checkBench(b *workloads.BenchSpec) *problem {
	for i, m := range b.Models {
		at := fmt.Sprintf("bench.models.%d", i)
		switch {
		case m.Path != "" && m.Shape != "":
			return bad(at, "give path (a GGUF file) or shape (a synthetic model), not both")
		case m.Path == "" && m.Shape == "":
			return bad(at, "give path (a GGUF file, or %s) or shape and type (a synthetic model)", BuiltinModel)
		case m.Path != "" && m.Type != "":
			return bad(at+".type", "type %q is for a synthetic shape; the file %s has its own", m.Type, m.Path)
		case strings.HasPrefix(m.Path, "builtin:") && m.Path != BuiltinModel:
			return bad(at+".path", "%q is not a built-in model (the one built in is %s)", m.Path, BuiltinModel)
		}
		if m.Shape != "" {
			if _, err := synth.Lookup(m.Shape); err != nil {
				return bad(at+".shape", "%s", strings.TrimPrefix(err.Error(), "synth: "))
			}
			if m.Type == "" {
				return bad(at, "synthetic shape %s has no type (%s)", m.Shape, strings.Join(synth.FileTypes(), ", "))
			}
			if _, err := synth.ParseFileType(m.Type); err != nil {
				return bad(at+".type", "%s", strings.TrimPrefix(err.Error(), "synth: "))
			}
		}
	}
	for _, c := range []struct {
		key string
		v   []int
		min int
	}{{"n_prompt", b.Prompt, 0}, {"n_gen", b.Gen, 0}, {"n_depth", b.Depth, 0}, {"n_batch", b.Batch, 1}, {"n_ubatch", b.UBatch, 1}, {"n_threads", b.Threads, 0}} {
		for i, x := range c.v {
			if x < c.min {
				return bad(fmt.Sprintf("bench.%s.%d", c.key, i), "%d is out of range (minimum %d)", x, c.min)
			}
		}
	}
	for i, fa := range b.FlashAttn {
		if fa != 0 && fa != 1 && fa != workloads.FlashAttnAuto {
			return bad(fmt.Sprintf("bench.flash_attn.%d", i), "%d is not 0, 1 or -1 (auto)", fa)
		}
	}
	for i, pg := range b.PG {
		if pg.Prompt < 0 || pg.Gen < 0 {
			return bad(fmt.Sprintf("bench.n_pg.%d", i), "%d,%d is out of range (minimum 0)", pg.Prompt, pg.Gen)
		}
	}
	for _, kv := range []struct {
		key string
		v   []string
	}{{"type_k", b.TypeK}, {"type_v", b.TypeV}} {
		for i, t := range kv.v {
			if !validKVType(t) {
				return bad(fmt.Sprintf("bench.%s.%d", kv.key, i), "%q is not a KV cache type (%s)", t, strings.Join(workloads.KVCacheTypes, ", "))
			}
		}
	}
	if b.Reps < 0 {
		return bad("bench.repetitions", "%d (minimum 1)", b.Reps)
	}
	if b.Delay < 0 || math.IsNaN(b.Delay) || math.IsInf(b.Delay, 0) {
		return bad("bench.delay", "%g is not a number of seconds ≥ 0", b.Delay)
	}
	if err := b.WithDefaults().Validate(); err != nil { // what is left: no test at all
		return bad("bench", "%v", err)
	}
	return nil
}

func validKVType(t string) bool {
	d, err := kernels.ParseDType(t)
	if err != nil {
		return false
	}
	return d == kernels.F16 || d == kernels.Q8_0 || d == kernels.F32
}

// checkServe checks a serve section (and its sweep) value by value.
func runCheckServe(r *Run) *problem {
	s := r.Serve
	backends := []string{"inproc", "openai", "openai-chat", "tgi", "llamacpp"}
	if !slices.Contains(backends, s.Backend) {
		return bad("serve.backend", "%q is not %s", s.Backend, orList(backends))
	}
	if s.Backend != "inproc" {
		if s.BaseURL == "" {
			return bad("serve.backend", "backend %s needs base_url (the server's http://HOST:PORT)", s.Backend)
		}
	}
	if s.BaseURL != "" {
		if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("serve.base_url", "%q is not an http:// or https:// address", s.BaseURL)
		}
	}
	if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "/") {
		return bad("serve.endpoint", "%q does not start with /", s.Endpoint)
	}
	if s.SyntheticType != "" {
		if _, err := synth.ParseFileType(s.SyntheticType); err != nil {
			return bad("serve.synthetic_type", "%s", strings.TrimPrefix(err.Error(), "synth: "))
		}
	}
	if s.Backend == "inproc" && strings.HasPrefix(s.Model, "builtin:") && s.Model != BuiltinModel {
		return bad("serve.model", "%q is not a built-in model (the one built in is %s; leave model empty for it)", s.Model, BuiltinModel)
	}
	if p := checkDataset(&s.Dataset); p != nil {
		return p
	}
	if err := serving.CheckEnergyDevice(s); err != nil {
		return bad("serve.energy_device", "%v", err)
	}
	if err := (engine.Options{Threads: s.Threads}).Validate(); err != nil {
		return bad("serve.threads", "%v", err)
	}
	for _, c := range runConcurrencies(r) {
		if c.v < 0 {
			return bad(c.key, "%d is negative (0 = no limit)", c.v)
		}
	}
	for _, rt := range runRates(r) {
		if !(rt.v > 0) {
			return bad(rt.key, "%v is not positive (requests per second, or inf)", rt.v)
		}
	}
	if !(s.Burstiness > 0) {
		return bad("serve.burstiness", "%g is not positive (1 = Poisson arrivals)", s.Burstiness)
	}
	switch s.RampUpStrategy {
	case "":
	case "linear", "exponential":
		if s.RampUpStartRPS < 0 || s.RampUpEndRPS <= 0 || s.RampUpStartRPS > s.RampUpEndRPS {
			return bad("serve.ramp_up_end_rps", "a ramp needs 0 ≤ ramp_up_start_rps ≤ ramp_up_end_rps, ramp_up_end_rps > 0 (got %g to %g)", s.RampUpStartRPS, s.RampUpEndRPS)
		}
		if s.RampUpStrategy == "exponential" && !(s.RampUpStartRPS > 0) {
			return bad("serve.ramp_up_start_rps", "an exponential ramp needs ramp_up_start_rps > 0")
		}
	default:
		return bad("serve.ramp_up_strategy", "%q is not linear or exponential", s.RampUpStrategy)
	}
	if s.NumWarmups < 0 {
		return bad("serve.num_warmups", "%d is negative", s.NumWarmups)
	}
	if !(s.RequestTimeoutS >= 0) || math.IsInf(s.RequestTimeoutS, 0) {
		return bad("serve.request_timeout_s", "%g is not a number of seconds ≥ 0 (0 = no limit)", s.RequestTimeoutS)
	}
	if t := s.Temperature; t != nil && (!(*t >= 0) || math.IsInf(*t, 0)) {
		return bad("serve.temperature", "%g is not ≥ 0", *t)
	}
	if p := s.TopP; p != nil && !(*p > 0 && *p <= 1) {
		return bad("serve.top_p", "%g is not in (0, 1]", *p)
	}
	if k := s.TopK; k != nil && *k < -1 {
		return bad("serve.top_k", "%d is below -1 (-1 or 0 = off)", *k)
	}
	if s.Threads < 0 {
		return bad("serve.threads", "%d is negative (0 = all cores)", s.Threads)
	}
	keys := report.PercentileMetricKeys()
	for i, m := range s.PercentileMetrics {
		if !slices.Contains(keys, m) {
			return bad(fmt.Sprintf("serve.percentile_metrics.%d", i), "%q is not a metric (%s)", m, strings.Join(keys, ", "))
		}
	}
	for i, p := range s.MetricPercentiles {
		if !(p >= 0 && p <= 100) {
			return bad(fmt.Sprintf("serve.metric_percentiles.%d", i), "%g is not a percentile in [0, 100]", p)
		}
	}
	for _, k := range sortedKeys(s.Goodput) {
		if k != "ttft" && k != "tpot" && k != "e2el" {
			return bad("serve.goodput."+k, "%q is not ttft, tpot or e2el", k)
		}
		if v := s.Goodput[k]; !(v >= 0) || math.IsInf(v, 0) {
			return bad("serve.goodput."+k, "%g is not a number of milliseconds ≥ 0", v)
		}
		if s.NonStreaming && k != "e2el" {
			return bad("serve.goodput."+k, "non_streaming measures no %s (only e2el)", k)
		}
	}
	e := s.Engine
	for _, c := range []struct {
		key string
		v   int
	}{{"max_num_seqs", e.MaxNumSeqs}, {"max_num_batched_tokens", e.MaxNumBatchedTokens}, {"block_size", e.BlockSize}} {
		if c.v < 0 {
			return bad("serve.engine."+c.key, "%d is negative (0 = the engine's default)", c.v)
		}
	}
	if e.KVCacheType != "" && !validKVType(e.KVCacheType) {
		return bad("serve.engine.kv_cache_type", "%q is not a KV cache type (%s)", e.KVCacheType, strings.Join(workloads.KVCacheTypes, ", "))
	}
	if _, _, err := workloads.ParseKVCacheMemory(e.KVCacheMemory); err != nil {
		return bad("serve.engine.kv_cache_memory", "%v", err)
	}
	return checkDraft(s)
}

// checkDraft checks a serve section's speculative-decoding keys (the draft model
// itself is found when the run loads it, as the model is).
func checkDraft(s *workloads.ServeSpec) *problem {
	e := s.Engine
	set := e.Draft != "" || e.DraftType != "" || e.DraftMax != 0 || e.DraftMin != 0 || e.DraftPMin != 0
	switch {
	case !set:
		return nil
	case s.Backend != "inproc":
		return bad("serve.engine.draft", "a draft model is for the inproc backend (give an external server its draft itself)")
	case e.Draft == "":
		return bad("serve.engine.draft", "draft settings without a draft model")
	case e.DraftMax < 0:
		return bad("serve.engine.draft_max", "%d is negative (0 = the engine's default)", e.DraftMax)
	case e.DraftMin < 0 || e.DraftMax > 0 && e.DraftMin > e.DraftMax:
		return bad("serve.engine.draft_min", "%d: want 0 to draft_max", e.DraftMin)
	case !(e.DraftPMin <= 1):
		return bad("serve.engine.draft_p_min", "%g is not a probability (negative: never stop early)", e.DraftPMin)
	}
	if e.DraftType != "" {
		if _, err := synth.ParseFileType(e.DraftType); err != nil {
			return bad("serve.engine.draft_type", "%s", strings.TrimPrefix(err.Error(), "synth: "))
		}
	}
	return nil
}

// checkDataset checks a serve section's dataset values (not its file, which
// ResolveDatasets finds).
func checkDataset(d *workloads.DatasetSpec) *problem {
	if !slices.Contains(workloads.Datasets, d.Name) {
		return bad("serve.dataset.dataset_name", "%q is not %s", d.Name, orList(workloads.Datasets))
	}
	if d.NumPrompts < 1 {
		return bad("serve.dataset.num_prompts", "%d (minimum 1)", d.NumPrompts)
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"random_input_len", d.RandomInputLen}, {"random_output_len", d.RandomOutputLen}, {"random_prefix_len", d.RandomPrefixLen},
		{"sonnet_input_len", d.SonnetInputLen}, {"sonnet_output_len", d.SonnetOutputLen}, {"sonnet_prefix_len", d.SonnetPrefixLen},
		{"sharegpt_output_len", d.ShareGPTOutputLen}, {"prefix_repetition_prefix_len", d.PrefixRepetitionPrefixLen},
		{"prefix_repetition_suffix_len", d.PrefixRepetitionSuffixLen}, {"prefix_repetition_num_prefixes", d.PrefixRepetitionNumPrefixes},
		{"prefix_repetition_output_len", d.PrefixRepetitionOutputLen}, {"custom_output_len", d.CustomOutputLen}} {
		if c.v < 0 {
			return bad("serve.dataset."+c.key, "%d is negative", c.v)
		}
	}
	if r := d.RandomRangeRatio; !(r >= 0 && r < 1) {
		return bad("serve.dataset.random_range_ratio", "%g is not in [0, 1)", r)
	}
	if d.Name == "prefix_repetition" && d.PrefixRepetitionNumPrefixes < 1 {
		return bad("serve.dataset.prefix_repetition_num_prefixes", "%d (minimum 1)", d.PrefixRepetitionNumPrefixes)
	}
	return nil
}

// concurrencies returns the max_concurrency values of a serve run with the key each
// came from.
func runConcurrencies(r *Run) []keyed[int] {
	if r.Sweep != nil && len(r.Sweep.MaxConcurrency) > 0 {
		out := make([]keyed[int], len(r.Sweep.MaxConcurrency))
		for i, c := range r.Sweep.MaxConcurrency {
			out[i] = keyed[int]{v: c, key: fmt.Sprintf("sweep.max_concurrency.%d", i)}
		}
		return out
	}
	return []keyed[int]{{v: r.Serve.MaxConcurrency, key: "serve.max_concurrency"}}
}

// rates returns the request_rate values of a serve run (none under a ramp, which
// sets the rate) with the key each came from.
func runRates(r *Run) []keyed[workloads.Rate] {
	if r.Serve.RampUpStrategy != "" {
		return nil
	}
	if r.Sweep != nil && len(r.Sweep.RequestRate) > 0 {
		out := make([]keyed[workloads.Rate], len(r.Sweep.RequestRate))
		for i, v := range r.Sweep.RequestRate {
			out[i] = keyed[workloads.Rate]{v: v, key: fmt.Sprintf("sweep.request_rate.%d", i)}
		}
		return out
	}
	return []keyed[workloads.Rate]{{v: r.Serve.RequestRate, key: "serve.request_rate"}}
}

// keyed is a value with the path of the key it came from.
type keyed[T any] struct {
	v   T
	key string
}

func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkFiles reports a model file of r that does not exist (paths as the run will
// open them) and a serve run whose dataset needs a file but names none.
func runCheckFiles(r *Run) *problem {
	if r.Bench != nil {
		for i, m := range r.Bench.Models {
			if m.Path == "" || strings.HasPrefix(m.Path, "builtin:") {
				continue
			}
			if fi, err := os.Stat(m.Path); err != nil || fi.IsDir() {
				return bad(fmt.Sprintf("bench.models.%d.path", i), "model file %s not found", m.Path)
			}
		}
	}
	if s := r.Serve; s != nil {
		if s.Backend == "inproc" && s.Model != "" && !strings.HasPrefix(s.Model, "builtin:") {
			if _, err := synth.Lookup(s.Model); err != nil {
				if fi, err := os.Stat(s.Model); err != nil || fi.IsDir() {
					return bad("serve.model", "%q is not a model file nor a synthetic shape (%s)", s.Model, strings.Join(synth.Shapes(), ", "))
				}
			}
		}
		if workloads.DatasetNeedsFile(s.Dataset.Name) && s.Dataset.Path == "" {
			return bad("serve.dataset.dataset_path", "dataset %s reads its prompts from a file: give dataset_path (or --dataset-path FILE)", s.Dataset.Name)
		}
	}
	if t := r.Throughput; t != nil && t.Model != "" && !strings.HasPrefix(t.Model, "builtin:") {
		if _, err := synth.Lookup(t.Model); err != nil {
			if fi, err := os.Stat(t.Model); err != nil || fi.IsDir() {
				return bad("throughput.model", "%q is not a model file nor a synthetic shape (%s)", t.Model, strings.Join(synth.Shapes(), ", "))
			}
		}
	}
	return nil
}
