package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"
)

// ExportSchema names the JSON export's layout; ExportSchemaVersion changes whenever a
// field is renamed, removed or changes meaning (additions keep the version).
const (
	ExportSchema        = "llmbench.report"
	ExportSchemaVersion = 1
)

// DocumentFunc writes a result.Document in one export format.
type DocumentFunc func(io.Writer, result.Document) error

// exporters maps a file extension (with its dot) to its writer.
var exporters = map[string]DocumentFunc{
	".md":   DocumentMarkdown,
	".csv":  DocumentCSV,
	".json": DocumentJSON,
	".html": DocumentHTML,
}

// ExportFormats returns the file extensions Export accepts (".csv", ".json", ...),
// sorted.
func ExportFormats() []string {
	out := make([]string, 0, len(exporters))
	for k := range exporters {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ExportFunc returns the writer for path's extension (case-insensitive), or an error
// naming the accepted extensions.
func ExportFunc(path string) (DocumentFunc, error) {
	ext := strings.ToLower(filepath.Ext(path))
	f, ok := exporters[ext]
	if !ok {
		got := "no extension"
		if ext != "" {
			got = "extension " + strconv.Quote(ext)
		}
		return nil, fmt.Errorf("export %s: %s is not a format; use one of %s", path, got, strings.Join(ExportFormats(), ", "))
	}
	return f, nil
}

// Export writes d to path in the format its extension names (.md, .csv, .json, .html;
// see ExportFormats). The file appears whole or not at all: it is written to a
// temporary file in the same directory and renamed over path.
func Export(path string, d result.Document) error {
	write, err := ExportFunc(path)
	if err != nil {
		return err
	}
	if d.Bench == nil && len(d.Serving) == 0 && d.Kernels == nil && d.Batch == nil {
		return fmt.Errorf("export %s: the run has no results", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp, d); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	done = true
	return nil
}

// partialNote says in words what a partial run's export holds.
const partialNote = "PARTIAL RUN: interrupted before it finished; only the measurements that completed are shown"

// mdCell escapes a value for a markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// DocumentMarkdown writes d as markdown: title, a partial-run banner, the environment
// table, then llama-bench's table (bench) or vLLM's result block per sweep point and
// the sweep table (serve-bench), the console text in fenced blocks.
func DocumentMarkdown(w io.Writer, d result.Document) error {
	var b bytes.Buffer
	title := d.Title
	if title == "" {
		title = "llmbench run"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if d.IsPartial() {
		fmt.Fprintf(&b, "> **%s**\n\n", partialNote)
	}
	if !d.Started.IsZero() {
		fmt.Fprintf(&b, "started: %s\n\n", d.Started.UTC().Format(time.RFC3339))
	}
	if len(d.Env) > 0 {
		b.WriteString("## Environment\n\n| key | value |\n| --- | --- |\n")
		for _, kv := range d.Env {
			fmt.Fprintf(&b, "| %s | %s |\n", mdCell(kv.Key), mdCell(kv.Value))
		}
		b.WriteString("\n")
	}
	if d.Bench != nil {
		b.WriteString("## Results\n\n")
		if err := LlamaBenchMarkdown(&b, d.Bench); err != nil {
			return err
		}
	}
	if d.Kernels != nil {
		kernelsMarkdown(&b, d.Kernels)
	}
	if d.Batch != nil {
		if err := TGIReport(&b, d.Batch); err != nil {
			return err
		}
	}
	if d.Throughput != nil {
		b.WriteString("## Throughput\n\n")
		if err := JetStreamTable(&b, d.Throughput); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if len(d.Serving) > 1 {
		b.WriteString("## Sweep\n\n```text\n")
		if err := VLLMSweepTable(&b, d.Serving); err != nil {
			return err
		}
		b.WriteString("```\n\n")
	}
	for i, res := range d.Serving {
		if len(d.Serving) > 1 {
			fmt.Fprintf(&b, "## Point %d: %s\n\n", i+1, servingPointLabel(res))
		} else {
			b.WriteString("## Results\n\n")
		}
		b.WriteString("```text\n")
		for _, f := range []func(io.Writer, *serving.Result) error{VLLMPreamble, VLLMFailures, VLLMBlock, VLLMExtras} {
			if err := f(&b, res); err != nil {
				return err
			}
		}
		b.WriteString("```\n\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// servingPointLabel names a sweep point by what the sweep varies: concurrency, rate
// and power limit.
func servingPointLabel(r *serving.Result) string {
	conc := "None"
	if r.Spec.MaxConcurrency > 0 {
		conc = strconv.Itoa(r.Spec.MaxConcurrency)
	}
	s := "concurrency " + conc + ", rate " + r.Spec.RequestRate.String()
	if r.PowerLimitW > 0 {
		s += ", power " + lbWatts(r.PowerLimitW)
	}
	if r.Partial {
		s += " (partial)"
	}
	return s
}

// DocumentCSV writes d as CSV with a header row: for bench, llama-bench's columns
// (one row per test, as LlamaBenchCSV) plus run_partial; for serve-bench, one row per
// sweep point with vLLM's saved-result names (latencies in ms) plus run_partial.
func DocumentCSV(w io.Writer, d result.Document) error {
	partial := d.IsPartial()
	if d.Kernels != nil {
		return kernelsCSV(w, d.Kernels, partial)
	}
	if d.Batch != nil {
		return tgiCSV(w, d.Batch, partial)
	}
	if d.Bench != nil {
		return lbCSV(w, d.Bench, lbField{"run_partial", lbBool, func(*micro.Record) any { return partial }})
	}
	cols := servingColumns(d.Serving)
	var b bytes.Buffer
	names := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		names = append(names, c.name)
	}
	b.WriteString(strings.Join(append(names, "run_partial"), ",") + "\n")
	for _, r := range d.Serving {
		cells := make([]string, 0, len(cols)+1)
		for _, c := range cols {
			cells = append(cells, csvQuote(lbText(c.get(r))))
		}
		b.WriteString(strings.Join(append(cells, csvQuote(lbText(partial))), ",") + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// csvQuote quotes a CSV cell, as llama-bench quotes every value.
func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// servingColumn is one column of the serving CSV: its name and how to read it.
type servingColumn struct {
	name string
	get  func(r *serving.Result) any
}

// servingColumns lists the serving CSV's columns: the point's settings, vLLM's
// throughput figures, each latency distribution (mean, median, std and every
// percentile any point computed), energy and the partial marker.
func servingColumns(points []*serving.Result) []servingColumn {
	opt := func(v float64, ok bool) any { return lbOpt(v, ok) }
	opt3 := func(v string) any { return lbOpt(v, v != "") }
	cols := []servingColumn{
		{"max_concurrency", func(r *serving.Result) any { return lbOpt(r.Spec.MaxConcurrency, r.Spec.MaxConcurrency > 0) }},
		{"request_rate", func(r *serving.Result) any { return r.Spec.RequestRate.String() }},
		{"power_limit_w", func(r *serving.Result) any { return opt(r.PowerLimitW, r.PowerLimitW > 0) }},
		{"model_id", func(r *serving.Result) any { return r.ModelID }},
		{"duration", func(r *serving.Result) any { return r.Duration.Seconds() }},
		{"completed", func(r *serving.Result) any { return r.Summary.Completed }},
		{"failed", func(r *serving.Result) any { return r.Summary.Failed }},
		{"total_input_tokens", func(r *serving.Result) any { return r.Summary.TotalInput }},
		{"total_output_tokens", func(r *serving.Result) any { return r.Summary.TotalOutput }},
		{"request_throughput", func(r *serving.Result) any { return r.Summary.RequestThroughput }},
		{"output_throughput", func(r *serving.Result) any { return r.Summary.OutputThroughput }},
		{"total_token_throughput", func(r *serving.Result) any { return r.Summary.TotalTokenThroughput }},
		{"max_output_tokens_per_s", func(r *serving.Result) any { return r.Summary.MaxOutputTokensPerS }},
		{"max_concurrent_requests", func(r *serving.Result) any { return r.Summary.MaxConcurrentRequests }},
	}
	var pcts []float64
	for _, r := range points {
		for _, p := range r.Summary.TTFT.Percentiles {
			if !slices.Contains(pcts, p.P) {
				pcts = append(pcts, p.P)
			}
		}
	}
	slices.Sort(pcts)
	for _, mt := range vllmMetrics[:4] { // ttft, tpot, itl, e2el
		dist, key := mt.dist, mt.key
		measured := func(r *serving.Result) bool { return r.Summary.Measured(key) } // --non-streaming: empty, never 0
		cols = append(cols,
			servingColumn{"mean_" + key + "_ms", func(r *serving.Result) any { return lbOpt(dist(&r.Summary).Mean, measured(r)) }},
			servingColumn{"median_" + key + "_ms", func(r *serving.Result) any { return lbOpt(dist(&r.Summary).Median, measured(r)) }},
			servingColumn{"std_" + key + "_ms", func(r *serving.Result) any { return lbOpt(dist(&r.Summary).Std, measured(r)) }})
		for _, p := range pcts {
			cols = append(cols, servingColumn{"p" + vllmPercentileWord(p) + "_" + key + "_ms", func(r *serving.Result) any {
				v, ok := dist(&r.Summary).Percentile(p)
				return lbOpt(v, ok && measured(r))
			}})
		}
	}
	cols = append(cols,
		servingColumn{"energy_device", func(r *serving.Result) any {
			if r.Telemetry == nil {
				return nil
			}
			return opt3(r.Telemetry.EnergyDevice())
		}},
		servingColumn{"power_source", func(r *serving.Result) any {
			if !r.EnergyKnown() {
				return nil
			}
			return opt3(r.Telemetry.Provenance())
		}},
		servingColumn{"power_mean_w", func(r *serving.Result) any {
			if !r.EnergyKnown() {
				return nil
			}
			return r.Telemetry.MeanW
		}},
		servingColumn{"energy_j", func(r *serving.Result) any {
			if !r.EnergyKnown() {
				return nil
			}
			return r.Telemetry.EnergyJ
		}},
		servingColumn{"output_tokens_per_joule", func(r *serving.Result) any {
			return opt(r.OutputTokensPerJoule(), r.EnergyKnown())
		}},
		servingColumn{"partial", func(r *serving.Result) any { return r.Partial }},
		servingColumn{"interrupted_requests", func(r *serving.Result) any { return r.Interrupted }},
	)
	return cols
}

// benchDefinitions states how the bench figures are computed, as
// metrics.Definitions does for serving.
var benchDefinitions = map[string]string{
	"samples_ns": "wall time of each timed repetition of a test (warm-up excluded), nanoseconds",
	"samples_ts": "tokens per second of each repetition: (n_prompt + n_gen) / its time, as llama-bench",
	"avg_ts":     "mean of samples_ts, as llama-bench (not tokens over total time)",
	"stddev_ts":  "sample standard deviation (n-1) of samples_ts, as llama-bench",
	"avg_ns":     "mean of samples_ns, truncated to an integer",
	"mem_bw_gbs": "llmbench: weight bytes read per generated token x avg_ts, tg tests only, GB/s (1e9 bytes)",
	"gflops":     "llmbench: floating-point operations of one repetition / avg_ns, 1e9 per second",
	"energy":     "llmbench: energy of the timed repetitions from the device that ran them (energy_device: cpu = RAPL package energy for the CPU engine; a GPU sampled beside it never counts), read as power_source says (rapl, nvml, or fake: not real readings); tokens_per_joule counts prompt and generated tokens of those repetitions",
}

// DocumentJSON writes d as one JSON object: schema and schema_version, title,
// started, partial, the environment (ordered key/value pairs), then the results
// (bench: llama-bench's objects, one per test; serve-bench: vLLM's saved-result
// object per sweep point, per-request arrays included) and metric_definitions, the
// definitions the figures follow.
func DocumentJSON(w io.Writer, d result.Document) error {
	var o vllmObject
	o.set("schema", ExportSchema)
	o.set("schema_version", ExportSchemaVersion)
	o.set("title", d.Title)
	if d.Started.IsZero() {
		o.set("started", nil)
	} else {
		o.set("started", d.Started.UTC().Format(time.RFC3339Nano))
	}
	o.set("partial", d.IsPartial())
	env := make([]vllmObject, len(d.Env))
	for i, kv := range d.Env {
		env[i] = vllmObject{{"key", kv.Key}, {"value", kv.Value}}
	}
	o.set("env", env)
	if d.Bench != nil {
		o.set("kind", "bench")
		recs := make([]json.RawMessage, len(d.Bench.Records))
		for i := range d.Bench.Records {
			var b bytes.Buffer
			if err := lbObject(&b, &d.Bench.Records[i], "{", " ", "}"); err != nil {
				return err
			}
			recs[i] = b.Bytes()
		}
		o.set("bench", recs)
		o.set("spec", d.Bench.Spec)
		o.set("read_bandwidth_gbs", lbOpt(d.Bench.ReadBandwidth/1e9, d.Bench.ReadBandwidth > 0))
		o.set("telemetry_note", d.Bench.TelemetryNote)
		o.set("metric_definitions", benchDefinitions)
	} else if d.Kernels != nil {
		kernelsJSON(&o, d.Kernels)
	} else if d.Batch != nil {
		tgiJSON(&o, d.Batch)
	} else {
		o.set("kind", "serving")
		points := make([]json.RawMessage, len(d.Serving))
		for i, r := range d.Serving {
			var b bytes.Buffer
			date := r.Started
			if date.IsZero() {
				date = d.Started
			}
			opt := VLLMJSONOptions{Detailed: true, Date: date, Version: d.Version()}
			if err := VLLMJSON(&b, r, opt); err != nil {
				return err
			}
			points[i] = b.Bytes()
		}
		o.set("serving", points)
		o.set("metric_definitions", metrics.Definitions)
	}
	out, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return fmt.Errorf("report json: %w", err)
	}
	_, err = w.Write(append(out, '\n'))
	return err
}
