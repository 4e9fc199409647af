package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"llmbench/workloads"
	"llmbench/workloads/micro"
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
	if lbShown(spec.FlashAttn, 0) {
		cols = append(cols, lbColumn{"fa", 3, func(r *micro.Record) string { return strconv.Itoa(r.FlashAttn) }})
	}
	cols = append(cols,
		lbColumn{"test", 15, func(r *micro.Record) string { return r.Name() }},
		lbColumn{"t/s", 20, func(r *micro.Record) string { return fmt.Sprintf("%.2f ± %.2f", r.AvgTs(), r.StddevTs()) }},
	)
	return cols
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
	cols := lbColumns(res.Spec)
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
	build := "llmbench"
	if len(res.Records) > 0 && res.Records[0].BuildCommit != "" {
		build += " " + res.Records[0].BuildCommit
	}
	fmt.Fprintf(&b, "\nbuild: %s\n", build)
	if res.ReadBandwidth > 0 {
		for i := range res.Records {
			r := &res.Records[i]
			if c := r.Ceiling(res.ReadBandwidth); c > 0 {
				fmt.Fprintf(&b, "%s (%s): %.2f t/s = %.0f%% of the read-bandwidth ceiling %.2f t/s (%.1f GB/s ÷ %s of weights per token)\n",
					r.Name(), r.ModelType, r.AvgTs(), 100*r.AvgTs()/c, c, res.ReadBandwidth/1e9, lbSize(r.WeightBytesPerToken))
			}
		}
	}
	if res.Partial || slices.ContainsFunc(res.Records, func(r micro.Record) bool { return r.Partial }) {
		b.WriteString("partial: interrupted before every test finished\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
