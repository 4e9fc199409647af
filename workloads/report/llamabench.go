package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"llmbench/workloads/micro"
	"llmbench/workloads/telemetry"
)

// LlamaBenchFunc writes a bench result in one of llama-bench's output formats.
type LlamaBenchFunc func(io.Writer, *micro.Result) error

// LlamaBenchFormats maps llama-bench's -o names to their exporters.
var LlamaBenchFormats = map[string]LlamaBenchFunc{
	"md":    LlamaBenchMarkdown,
	"csv":   LlamaBenchCSV,
	"json":  LlamaBenchJSON,
	"jsonl": LlamaBenchJSONL,
	"sql":   LlamaBenchSQL,
}

// LlamaBenchTee returns an exporter writing first to its writer and second to w2, as
// llama-bench's -o and -oe (stdout and stderr).
func LlamaBenchTee(first, second LlamaBenchFunc, w2 io.Writer) LlamaBenchFunc {
	return func(w io.Writer, res *micro.Result) error {
		return errors.Join(first(w, res), second(w2, res))
	}
}

// LlamaBenchFormatNames returns the -o names, sorted.
func LlamaBenchFormatNames() []string {
	var out []string
	for k := range LlamaBenchFormats {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lbKind is a field's type in llama-bench's schema (JSON value kind, SQL column type).
type lbKind int

const (
	lbString lbKind = iota
	lbInt
	lbBool
	lbFloat
)

// lbField is one exported field: llama-bench's name and type, and how to read it.
type lbField struct {
	name string
	kind lbKind
	get  func(r *micro.Record) any
}

// lbFields are the fields every machine-readable format carries, in order: llama-bench's
// names and types first (its 40 of tools/llama-bench/llama-bench.cpp at
// ggml-org/llama.cpp 0104b151, docs/COMPATIBILITY.md), llmbench's additions after.
var lbFields = []lbField{
	{"build_commit", lbString, func(r *micro.Record) any { return r.BuildCommit }},
	{"build_number", lbInt, func(r *micro.Record) any { return r.BuildNumber }},
	{"cpu_info", lbString, func(r *micro.Record) any { return r.CPUInfo }},
	{"gpu_info", lbString, func(r *micro.Record) any { return r.GPUInfo }},
	{"backends", lbString, func(r *micro.Record) any { return r.Backends }},
	{"model_filename", lbString, func(r *micro.Record) any { return r.ModelFilename }},
	{"model_type", lbString, func(r *micro.Record) any { return r.ModelType }},
	{"model_size", lbInt, func(r *micro.Record) any { return r.ModelSize }},
	{"model_n_params", lbInt, func(r *micro.Record) any { return r.ModelNParams }},
	{"n_batch", lbInt, func(r *micro.Record) any { return r.NBatch }},
	{"n_ubatch", lbInt, func(r *micro.Record) any { return r.NUBatch }},
	{"n_threads", lbInt, func(r *micro.Record) any { return r.NThreads }},
	{"cpu_mask", lbString, func(r *micro.Record) any { return r.CPUMask }},
	{"cpu_strict", lbBool, func(r *micro.Record) any { return r.CPUStrict }},
	{"poll", lbInt, func(r *micro.Record) any { return r.Poll }},
	{"type_k", lbString, func(r *micro.Record) any { return r.TypeK }},
	{"type_v", lbString, func(r *micro.Record) any { return r.TypeV }},
	{"n_gpu_layers", lbInt, func(r *micro.Record) any { return r.NGPULayers }},
	{"n_cpu_moe", lbInt, func(r *micro.Record) any { return r.NCPUMoE }},
	{"split_mode", lbString, func(r *micro.Record) any { return r.SplitMode }},
	{"main_gpu", lbInt, func(r *micro.Record) any { return r.MainGPU }},
	{"no_kv_offload", lbBool, func(r *micro.Record) any { return r.NoKVOffload }},
	{"flash_attn", lbInt, func(r *micro.Record) any { return r.FlashAttn }},
	{"devices", lbString, func(r *micro.Record) any { return r.Devices }},
	{"tensor_split", lbString, func(r *micro.Record) any { return r.TensorSplit }},
	{"tensor_buft_overrides", lbString, func(r *micro.Record) any { return r.Overrides }},
	{"load_mode", lbString, func(r *micro.Record) any { return r.LoadMode() }},
	{"embeddings", lbBool, func(r *micro.Record) any { return r.Embeddings }},
	{"no_op_offload", lbInt, func(r *micro.Record) any { return r.NoOpOffload }},
	{"no_host", lbBool, func(r *micro.Record) any { return r.NoHost }},
	{"fit_target", lbInt, func(r *micro.Record) any { return r.FitTarget }},
	{"fit_min_ctx", lbInt, func(r *micro.Record) any { return r.FitMinCtx }},
	{"n_prompt", lbInt, func(r *micro.Record) any { return r.NPrompt }},
	{"n_gen", lbInt, func(r *micro.Record) any { return r.NGen }},
	{"n_depth", lbInt, func(r *micro.Record) any { return r.NDepth }},
	{"test_time", lbString, func(r *micro.Record) any { return r.TestTime }},
	{"avg_ns", lbInt, func(r *micro.Record) any { return r.AvgNs() }},
	{"stddev_ns", lbInt, func(r *micro.Record) any { return r.StddevNs() }},
	{"avg_ts", lbFloat, func(r *micro.Record) any { return r.AvgTs() }},
	{"stddev_ts", lbFloat, func(r *micro.Record) any { return r.StddevTs() }},
	// llmbench's additions. use_mmap: llama-bench's key before load_mode replaced it,
	// still required by llama.cpp's scripts/compare-llama-bench.py.
	{"use_mmap", lbBool, func(r *micro.Record) any { return r.UseMmap }},
	{"backend_impl", lbString, func(r *micro.Record) any { return r.BackendImpl }},
	{"peak_rss_bytes", lbInt, func(r *micro.Record) any { return r.PeakRSS }},
	{"kv_cache_bytes", lbInt, func(r *micro.Record) any { return r.KVCacheBytes }},
	{"weight_bytes_per_token", lbInt, func(r *micro.Record) any { return r.WeightBytesPerToken }},
	{"mem_bw_gbs", lbFloat, func(r *micro.Record) any { return r.MemBandwidth() / 1e9 }},
	// read_bw_gbs: the time-average of the read-bandwidth probes around a tg test's
	// repetitions (--ceiling); read_bw_probes_gbs: each probe, in order, comma-separated
	{"read_bw_gbs", lbFloat, func(r *micro.Record) any { return lbOpt(r.ReadBandwidth/1e9, r.ReadBandwidth > 0) }},
	{"read_bw_probes_gbs", lbString, func(r *micro.Record) any {
		p := make([]string, len(r.ReadBandwidthProbes))
		for i, v := range r.ReadBandwidthProbes {
			p[i] = strconv.FormatFloat(v/1e9, 'f', 2, 64)
		}
		return lbOpt(strings.Join(p, ","), len(p) > 0)
	}},
	{"gflops", lbFloat, func(r *micro.Record) any { return r.FLOPS() / 1e9 }},
	{"partial", lbBool, func(r *micro.Record) any { return r.Partial }},
	// telemetry: null (JSON), empty (CSV) or NULL (SQL) when not measured
	{"power_limit_w", lbFloat, func(r *micro.Record) any { return lbOpt(r.PowerLimitW, r.PowerLimitW > 0) }},
	// energy_device: the device the energy figures come from (cpu, gpu, gpu:N);
	// power_source: how its power was read (rapl, nvml, or fake: not real readings);
	// gpu_source: the GPU readings beside it (nvml, fake); energy_note: why no energy.
	{"energy_device", lbString, func(r *micro.Record) any {
		return lbTele(r, func(p *telemetry.Power) any { return lbOpt(p.EnergyDevice(), p.EnergyDevice() != "") }, nil)
	}},
	{"power_source", lbString, func(r *micro.Record) any {
		return lbTele(r, func(p *telemetry.Power) any { return lbOpt(p.Provenance(), p.Known() && p.Provenance() != "") }, nil)
	}},
	{"gpu_source", lbString, func(r *micro.Record) any {
		return lbTele(r, func(p *telemetry.Power) any { return lbOpt(p.GPUSource, p.GPUSource != "") }, nil)
	}},
	{"energy_note", lbString, func(r *micro.Record) any {
		return lbTele(r, func(p *telemetry.Power) any { return lbOpt(p.Note, !p.Known() && p.Note != "") }, nil)
	}},
	{"power_min_w", lbFloat, func(r *micro.Record) any { return lbEnergy(r, func(p *telemetry.Power) float64 { return p.MinW }) }},
	{"power_mean_w", lbFloat, func(r *micro.Record) any { return lbEnergy(r, func(p *telemetry.Power) float64 { return p.MeanW }) }},
	{"power_max_w", lbFloat, func(r *micro.Record) any { return lbEnergy(r, func(p *telemetry.Power) float64 { return p.MaxW }) }},
	{"energy_j", lbFloat, func(r *micro.Record) any { return lbEnergy(r, func(p *telemetry.Power) float64 { return p.EnergyJ }) }},
	{"tokens_per_joule", lbFloat, func(r *micro.Record) any { return lbOpt(r.TokensPerJoule(), r.EnergyKnown()) }},
	{"joules_per_output_token", lbFloat, func(r *micro.Record) any { return lbOpt(r.JoulesPerOutputToken(), r.JoulesPerOutputToken() > 0) }},
	{"sm_clock_mean_mhz", lbFloat, func(r *micro.Record) any {
		return lbEnergy(r, func(p *telemetry.Power) float64 { return p.SMClockMHz })
	}},
	{"temp_max_c", lbInt, func(r *micro.Record) any {
		return lbTele(r, func(p *telemetry.Power) any { return lbOpt(p.TempMaxC, p.Known() && p.TempMaxC > 0) }, nil)
	}},
	{"telemetry_samples", lbInt, func(r *micro.Record) any { return lbTele(r, func(p *telemetry.Power) any { return p.Samples }, 0) }},
}

// lbOpt is v when ok, else nil (written as null, an empty cell or NULL).
func lbOpt[T any](v T, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

// lbTele reads the record's telemetry summary, def when there is none.
func lbTele(r *micro.Record, f func(p *telemetry.Power) any, def any) any {
	if r.Telemetry == nil {
		return def
	}
	return f(r.Telemetry)
}

// lbEnergy reads a figure of the power summary when energy was measured.
func lbEnergy(r *micro.Record, f func(p *telemetry.Power) float64) any {
	if !r.EnergyKnown() {
		return nil
	}
	return f(r.Telemetry)
}

// lbText formats a field value as text (CSV cells, SQL literals): integers in decimal,
// floats with six decimals and booleans as 0/1, as llama-bench's std::to_string does.
func lbText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return "0"
	case float64:
		return strconv.FormatFloat(x, 'f', 6, 64)
	}
	return fmt.Sprint(v)
}

// LlamaBenchKeys is the number of lbFields that are llama-bench's own.
const LlamaBenchKeys = 40

// lbObject writes one record as a JSON object: llama-bench's fields, its samples_ns
// and samples_ts, then llmbench's additions; sep goes between members.
func lbObject(w io.Writer, r *micro.Record, open, sep, close string) error {
	var b strings.Builder
	b.WriteString(open)
	member := func(name string, v any) error {
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if b.Len() > len(open) {
			b.WriteString("," + sep)
		}
		fmt.Fprintf(&b, "%q: %s", name, j)
		return nil
	}
	for i, f := range lbFields {
		if i == LlamaBenchKeys {
			if err := member("samples_ns", r.SamplesNs); err != nil {
				return err
			}
			if err := member("samples_ts", r.SamplesTs()); err != nil {
				return err
			}
		}
		if err := member(f.name, f.get(r)); err != nil {
			return err
		}
	}
	b.WriteString(close)
	_, err := io.WriteString(w, b.String())
	return err
}

// LlamaBenchJSON writes a JSON array with one object per test: llama-bench's fields
// (strings, booleans, integers, floats as its json printer types them), samples_ns and
// samples_ts, then llmbench's additions.
func LlamaBenchJSON(w io.Writer, res *micro.Result) error {
	if len(res.Records) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	for i := range res.Records {
		if i > 0 {
			if _, err := io.WriteString(w, ",\n"); err != nil {
				return err
			}
		}
		if err := lbObject(w, &res.Records[i], "  {\n    ", "\n    ", "\n  }"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n]\n")
	return err
}

// LlamaBenchJSONL writes one JSON object per test per line.
func LlamaBenchJSONL(w io.Writer, res *micro.Result) error {
	for i := range res.Records {
		if err := lbObject(w, &res.Records[i], "{", " ", "}\n"); err != nil {
			return err
		}
	}
	return nil
}

// LlamaBenchCSV writes a header row of field names and one row per test, every value
// quoted, as llama-bench does.
func LlamaBenchCSV(w io.Writer, res *micro.Result) error { return lbCSV(w, res) }

// lbCSV writes the CSV of LlamaBenchCSV with extra columns after llama-bench's.
func lbCSV(w io.Writer, res *micro.Result, extra ...lbField) error {
	fields := append(slices.Clip(lbFields), extra...)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	if _, err := fmt.Fprintln(w, strings.Join(names, ",")); err != nil {
		return err
	}
	for i := range res.Records {
		cells := make([]string, len(fields))
		for j, f := range fields {
			cells[j] = csvQuote(lbText(f.get(&res.Records[i])))
		}
		if _, err := fmt.Fprintln(w, strings.Join(cells, ",")); err != nil {
			return err
		}
	}
	return nil
}

// LlamaBenchSQL writes a CREATE TABLE IF NOT EXISTS llama_bench statement and one
// INSERT per test, ready for sqlite3.
func LlamaBenchSQL(w io.Writer, res *micro.Result) error {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS llama_bench (\n")
	names := make([]string, len(lbFields))
	for i, f := range lbFields {
		names[i] = f.name
		typ := "TEXT"
		switch f.kind {
		case lbInt, lbBool:
			typ = "INTEGER"
		case lbFloat:
			typ = "REAL"
		}
		sep := ","
		if i == len(lbFields)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", f.name, typ, sep)
	}
	b.WriteString(");\n\n")
	cols := strings.Join(names, ", ")
	for i := range res.Records {
		vals := make([]string, len(lbFields))
		for j, f := range lbFields {
			v := f.get(&res.Records[i])
			if v == nil {
				vals[j] = "NULL"
				continue
			}
			vals[j] = "'" + strings.ReplaceAll(lbText(v), "'", "''") + "'"
		}
		fmt.Fprintf(&b, "INSERT INTO llama_bench (%s) VALUES (%s);\n", cols, strings.Join(vals, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
