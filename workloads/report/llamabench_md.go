package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/power"
	"llmbench/workloads/telemetry"
)

// lbColumn is one column of the markdown table: its header, width (negative: left
// aligned) and cell.
type lbColumn struct {
	head  string
	width int
	cell  func(r *micro.Record) string
}

// lbShown reports whether a parameter gets a column, by llama-bench's rule: it was
// given more than one value, or a value other than the default.
func lbShown[T comparable](v []T, def T) bool {
	return len(v) > 1 || len(v) == 1 && v[0] != def
}

// lbColumns selects the markdown columns for spec: model, size, params, backend,
// threads, the parameters that vary or differ from the defaults, test and t/s.
func lbColumns(spec workloads.BenchSpec) []lbColumn {
	cols := []lbColumn{
		{"model", -30, func(r *micro.Record) string { return r.ModelType }},
		{"size", 10, func(r *micro.Record) string { return lbSize(r.ModelSize) }},
		{"params", 10, func(r *micro.Record) string { return lbParams(r.ModelNParams) }},
		{"backend", -10, func(r *micro.Record) string { return r.Backends }},
		{"threads", 7, func(r *micro.Record) string { return strconv.Itoa(r.NThreads) }},
	}
	c, g := spec.LlamaBenchCPU, spec.LlamaBenchGPU
	if lbShown(g.NCPUMoE, 0) {
		cols = append(cols, lbColumn{"n_cpu_moe", 10, func(r *micro.Record) string { return strconv.Itoa(r.NCPUMoE) }})
	}
	if lbShown(c.CPUMask, workloads.DefaultCPUMask) {
		cols = append(cols, lbColumn{"cpu_mask", -10, func(r *micro.Record) string { return r.CPUMask }})
	}
	if lbShown(c.CPUStrict, 0) {
		cols = append(cols, lbColumn{"cpu_strict", 10, func(r *micro.Record) string { return lbBit(r.CPUStrict) }})
	}
	if lbShown(c.Poll, workloads.DefaultPoll) {
		cols = append(cols, lbColumn{"poll", 10, func(r *micro.Record) string { return strconv.Itoa(r.Poll) }})
	}
	if lbShown(spec.Batch, workloads.DefaultBenchBatch) {
		cols = append(cols, lbColumn{"n_batch", 7, func(r *micro.Record) string { return strconv.Itoa(r.NBatch) }})
	}
	if lbShown(spec.UBatch, workloads.DefaultBenchUBatch) {
		cols = append(cols, lbColumn{"n_ubatch", 8, func(r *micro.Record) string { return strconv.Itoa(r.NUBatch) }})
	}
	lower := func(v []string) []string {
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = strings.ToLower(s)
		}
		return out
	}
	tk, tv := lower(spec.TypeK), lower(spec.TypeV)
	if len(tv) == 0 {
		tv = tk // V follows K
	}
	if lbShown(tk, workloads.DefaultBenchKV) {
		cols = append(cols, lbColumn{"type_k", 6, func(r *micro.Record) string { return r.TypeK }})
	}
	if lbShown(tv, workloads.DefaultBenchKV) {
		cols = append(cols, lbColumn{"type_v", 6, func(r *micro.Record) string { return r.TypeV }})
	}
	if lbShown(g.MainGPU, 0) {
		cols = append(cols, lbColumn{"main_gpu", 10, func(r *micro.Record) string { return strconv.Itoa(r.MainGPU) }})
	}
	if lbShown(g.SplitMode, workloads.DefaultSplitMode) {
		cols = append(cols, lbColumn{"sm", -6, func(r *micro.Record) string { return r.SplitMode }})
	}
	if lbShown(g.NoKVOffload, 0) {
		cols = append(cols, lbColumn{"nkvo", 10, func(r *micro.Record) string { return lbBit(r.NoKVOffload) }})
	}
	// Both the profiles' default (0) and the command line's (auto) count as unset.
	if lbShown(spec.FlashAttn, 0) && lbShown(spec.FlashAttn, workloads.FlashAttnAuto) {
		cols = append(cols, lbColumn{"fa", 3, func(r *micro.Record) string { return strconv.Itoa(r.FlashAttn) }})
	}
	for _, o := range []struct {
		head  string
		width int
		shown bool
		get   func(r *micro.Record) string
	}{
		{"dev", -12, lbShown(g.Devices, workloads.DefaultDevices), func(r *micro.Record) string { return r.Devices }},
		{"ts", -10, lbShown(g.TensorSplit, workloads.DefaultTSplit), func(r *micro.Record) string { return r.TensorSplit }},
		{"ot", -10, lbShown(g.Overrides, workloads.DefaultOverrides), func(r *micro.Record) string { return r.Overrides }},
		{"lm", -10, lbShown(c.UseMmap, 1), func(r *micro.Record) string { return r.LoadMode() }},
		{"embd", 10, lbShown(g.Embeddings, 0), func(r *micro.Record) string { return lbBit(r.Embeddings) }},
		{"nopo", 4, lbShown(g.NoOpOffload, 0), func(r *micro.Record) string { return strconv.Itoa(r.NoOpOffload) }},
		{"noh", 4, lbShown(g.NoHost, 0), func(r *micro.Record) string { return lbBit(r.NoHost) }},
		{"fitt", 10, lbShown(g.FitTarget, 0), func(r *micro.Record) string { return strconv.Itoa(r.FitTarget) }},
		{"fitc", 10, lbShown(g.FitMinCtx, 0), func(r *micro.Record) string { return strconv.Itoa(r.FitMinCtx) }},
	} {
		if o.shown {
			cols = append(cols, lbColumn{o.head, o.width, o.get})
		}
	}
	cols = append(cols,
		lbColumn{"test", 15, func(r *micro.Record) string { return r.Name() }},
		lbColumn{"t/s", 20, func(r *micro.Record) string { return fmt.Sprintf("%.2f ± %.2f", r.AvgTs(), r.StddevTs()) }},
	)
	return cols
}

// lbBit writes a boolean setting as llama-bench's markdown does (std::to_string).
func lbBit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// lbSize formats bytes as llama-bench's size column: MiB below 1 GiB, GiB above.
func lbSize(n uint64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// lbParams formats a parameter count as llama-bench's params column.
func lbParams(n uint64) string {
	if n < 1e9 {
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f B", float64(n)/1e9)
}

// lbRow writes one markdown row: each cell padded to its width (in characters).
func lbRow(w *strings.Builder, cols []lbColumn, cell func(c lbColumn) string) {
	w.WriteString("|")
	for _, c := range cols {
		fmt.Fprintf(w, " %*s |", c.width, cell(c))
	}
	w.WriteString("\n")
}

// LlamaBenchMarkdown writes llama-bench's markdown table (model, size, params, backend,
// threads, the parameters that vary, test, t/s as mean ± sample std), then a build
// line and, when the read bandwidth was measured, each tg test against its ceiling.
func LlamaBenchMarkdown(w io.Writer, res *micro.Result) error {
	cols := lbTableColumns(res)
	var b strings.Builder
	lbRow(&b, cols, func(c lbColumn) string { return c.head })
	lbRow(&b, cols, func(c lbColumn) string {
		n := c.width
		if n < 0 {
			return strings.Repeat("-", -n)
		}
		return strings.Repeat("-", n-1) + ":"
	})
	for i := range res.Records {
		r := &res.Records[i]
		lbRow(&b, cols, func(c lbColumn) string { return c.cell(r) })
	}
	b.WriteString("\n")
	lbNotes(&b, res)
	_, err := io.WriteString(w, b.String())
	return err
}

// lbTableColumns is lbColumns plus the power limit (when swept) and the measured
// power and tokens per joule (when energy was measured).
func lbTableColumns(res *micro.Result) []lbColumn {
	cols := lbColumns(res.Spec)
	if slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.PowerLimitW > 0 }) {
		// before test and t/s, as llama-bench places its parameters
		power := lbColumn{"power", 7, func(r *micro.Record) string { return lbWatts(r.PowerLimitW) }}
		cols = append(cols[:len(cols)-2], power, cols[len(cols)-2], cols[len(cols)-1])
	}
	if slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.EnergyKnown() }) {
		// The heads name the device the energy came from ("CPU W", "FAKE GPU t/J").
		dev := lbEnergyHead(res)
		cols = append(cols,
			lbColumn{dev + "W", 7 + len(dev), func(r *micro.Record) string {
				if !r.EnergyKnown() {
					return "-"
				}
				return fmt.Sprintf("%.1f", r.Telemetry.MeanW)
			}},
			lbColumn{dev + "t/J", 10 + len(dev), func(r *micro.Record) string {
				if !r.EnergyKnown() {
					return "-"
				}
				return lbPerJoule(r.TokensPerJoule())
			}})
	}
	return cols
}

// lbNotes writes what follows the markdown table: the build line, where the energy
// came from (or why it was not measured) and which telemetry was sampled, each tg
// test against its read-bandwidth ceiling, the power sweep's tables, and the
// partial-run marker.
func lbNotes(b *strings.Builder, res *micro.Result) {
	build := "llmbench"
	if len(res.Records) > 0 && res.Records[0].BuildCommit != "" {
		build += " " + res.Records[0].BuildCommit
	}
	fmt.Fprintf(b, "build: %s\n", build)
	lbEnergyNotes(b, res)
	for i := range res.Records {
		r := &res.Records[i]
		bw, when, unsteady := r.ReadBandwidth, "measured just before the test", ""
		if n := len(r.ReadBandwidthProbes); n > 1 {
			lo, hi := slices.Min(r.ReadBandwidthProbes), slices.Max(r.ReadBandwidthProbes)
			when = fmt.Sprintf("averaged over the %d probes around its repetitions (%.1f–%.1f GB/s)", n, lo/1e9, hi/1e9)
			if lo > 0 && hi > unsteadyProbes*lo {
				unsteady = fmt.Sprintf("; the probes differ by %.0f %%: the host's read rate moved during the test, so the share is uncertain by as much", 100*(hi/lo-1))
			}
		}
		if bw <= 0 {
			bw, when = res.ReadBandwidth, "measured before the tests"
		}
		if c := r.Ceiling(bw); c > 0 {
			above := ""
			if r.AvgTs() > c {
				above = "; above the ceiling: the test read its weights faster than the probe read its buffer, so the probe understates this machine"
			}
			fmt.Fprintf(b, "%s (%s): %.2f t/s = %.0f%% of the read-bandwidth ceiling %.2f t/s (%.1f GB/s %s ÷ %s of weights per token)%s%s\n",
				r.Name(), r.ModelType, r.AvgTs(), 100*r.AvgTs()/c, c, bw/1e9, when, lbSize(r.WeightBytesPerToken), unsteady, above)
		}
	}
	if slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.PowerLimitW > 0 }) {
		lbSweepSummary(b, res)
	}
	if res.Partial || slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.Partial }) {
		b.WriteString("partial: interrupted before every test finished\n")
	}
}

// unsteadyProbes is the ratio of a tg test's fastest read-bandwidth probe to its
// slowest above which its ceiling line says the share is uncertain: on a shared 2-core
// AMD EPYC (Zen 5) VM the probes around one llama-1b test ranged from 3 % apart while
// the host was steady to 29.2–66.5 GB/s while it was not, and the same type's share
// read 77 % in one run and 89 % in the next.
const unsteadyProbes = 1.2

// lbEnergyHead is the prefix of the energy columns' heads: the energy device of the
// measured records ("CPU ", "GPU ", "GPU 0 "), "FAKE " before it when the readings
// are the fake device's; empty for old results that did not say.
func lbEnergyHead(res *micro.Result) string {
	var dev, src string
	for i := range res.Records {
		if r := &res.Records[i]; r.EnergyKnown() {
			d, s := r.Telemetry.EnergyDevice(), r.Telemetry.Provenance()
			if dev != "" && (d != dev || s != src) {
				return "" // mixed: the notes below the table say which is which
			}
			dev, src = d, s
		}
	}
	head := ""
	switch {
	case dev == telemetry.EnergyCPU:
		head = "CPU "
	case strings.HasPrefix(dev, telemetry.EnergyGPUs):
		head = telemetry.DeviceLabel(dev) + " "
	}
	if src == telemetry.SourceFake {
		head = "FAKE " + head
	}
	return head
}

// lbEnergyNotes says, below the table, where the energy came from and whether the
// readings are real (one line per distinct device), and which telemetry the run
// sampled: a fake GPU is named fake even when it is not the energy device.
func lbEnergyNotes(b *strings.Builder, res *micro.Result) {
	var seen []string
	fake := false
	for i := range res.Records {
		tp := res.Records[i].Telemetry
		if tp == nil {
			continue
		}
		fake = fake || tp.Fake()
		if d := tp.Describe(); !slices.Contains(seen, d) {
			seen = append(seen, d)
			fmt.Fprintf(b, "energy: %s\n", d)
		}
	}
	if len(seen) == 0 && len(res.Records) > 0 && res.TelemetryNote != "" {
		b.WriteString("energy: not measured (no telemetry sampled)\n")
	}
	if res.TelemetryNote != "" {
		fmt.Fprintf(b, "telemetry: %s\n", res.TelemetryNote)
	}
	if fake && !strings.Contains(strings.ToLower(res.TelemetryNote), "fake") {
		b.WriteString("telemetry: the GPU readings are FAKE (scripted device, not real)\n")
	}
}

// lbWatts formats a power limit ("600 W", "-" when unchanged).
func lbWatts(w float64) string {
	if w <= 0 {
		return "-"
	}
	return strconv.FormatFloat(w, 'f', -1, 64) + " W"
}

// lbPerJoule formats tokens per joule with three significant digits.
func lbPerJoule(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// lbSweepSummary writes the power sweep's "tokens/s vs watts" and "tokens/J vs
// watts" tables: one row per test, one column per limit (highest first), each cell
// with its share of the highest limit's figure.
func lbSweepSummary(b *strings.Builder, res *micro.Result) {
	label := func(r *micro.Record) string {
		return fmt.Sprintf("%s t=%d %s", r.ModelType, r.NThreads, r.Name())
	}
	var names []string
	var limits, ts, tj []float64
	for i := range res.Records {
		r := &res.Records[i]
		if r.PowerLimitW <= 0 {
			continue
		}
		names = append(names, label(r))
		limits = append(limits, r.PowerLimitW)
		ts = append(ts, r.AvgTs())
		tj = append(tj, r.TokensPerJoule())
	}
	table := func(title string, values []float64, format func(float64) string) {
		rows, ws := power.Table(names, limits, values)
		fmt.Fprintf(b, "\n%s\n\n| %-40s |", title, "test")
		for _, w := range ws {
			fmt.Fprintf(b, " %16s |", lbWatts(w))
		}
		fmt.Fprintf(b, "\n| %s |", strings.Repeat("-", 40))
		for range ws {
			fmt.Fprintf(b, " %s: |", strings.Repeat("-", 15))
		}
		b.WriteString("\n")
		for _, row := range rows {
			fmt.Fprintf(b, "| %-40s |", row.Test)
			ref := row.Values[ws[0]]
			for _, w := range ws {
				v, ok := row.Values[w]
				cell := "-"
				if ok && v > 0 {
					cell = format(v)
					if ref > 0 {
						cell += fmt.Sprintf(" (%3.0f%%)", 100*v/ref)
					}
				}
				fmt.Fprintf(b, " %16s |", cell)
			}
			b.WriteString("\n")
		}
	}
	table("tokens/s vs watts (power limit; % of the highest limit)", ts, func(v float64) string { return fmt.Sprintf("%.2f", v) })
	if slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.EnergyKnown() }) {
		table("tokens/J vs watts (measured energy of the timed repetitions)", tj, lbPerJoule)
	} else {
		b.WriteString("\ntokens/J vs watts: energy not measured\n")
	}
}
