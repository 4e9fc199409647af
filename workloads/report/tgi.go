package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"llmbench/workloads/micro"
)

// TGIReport writes runs of TGI's benchmark as TGI's report lays them out: the table
// of the launcher's arguments and the table of the experiment's parameters (the
// first run's), then each run under a "# label" heading with TGI's latency and
// throughput tables (and its own tables where they differ from the first run's). A
// run measured on a server says that its figures are approximations.
func TGIReport(w io.Writer, runs ...*micro.BatchResult) error {
	if len(runs) == 0 {
		return errors.New("tgi report: no run")
	}
	var b bytes.Buffer
	first := runs[0]
	launcher, params := tgiLauncherTable(first), tgiParametersTable(first)
	b.WriteString(launcher + "\n" + params + "\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "# %s\n\n", r.Label)
		if r.Approximate {
			fmt.Fprintf(&b, "> **%s**\n\n", micro.ApproximationNote)
		}
		if r.Partial {
			fmt.Fprintf(&b, "> **%s**\n\n", partialNote)
		}
		if l := tgiLauncherTable(r); l != launcher {
			b.WriteString(l + "\n")
		}
		if p := tgiParametersTable(r); p != params {
			b.WriteString(p + "\n")
		}
		b.WriteString(TGILatencyTable(r) + "\n" + TGIThroughputTable(r) + "\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// TGILatencyTable returns TGI's latency table: Prefill, Decode (token) and Decode
// (total) for each batch size, in ms, the Step named on its first row only.
func TGILatencyTable(r *micro.BatchResult) string {
	return tgiTable(tgiRows([]string{"Step", "Batch Size", "Average", "Lowest", "Highest", "p50", "p90", "p99"}, r,
		[]tgiStep{{"Prefill", micro.BatchPoint.PrefillMs}, {"Decode (token)", micro.BatchPoint.DecodeTokenMs}, {"Decode (total)", micro.BatchPoint.DecodeTotalMs}},
		func(st micro.BatchStats) []string {
			return []string{tgiValue(st.Avg, "ms"), tgiValue(st.Min, "ms"), tgiValue(st.Max, "ms"), tgiValue(st.P50, "ms"), tgiValue(st.P90, "ms"), tgiValue(st.P99, "ms")}
		}))
}

// TGIThroughputTable returns TGI's throughput table: Prefill and Decode for each
// batch size, in tokens/secs, the Step named on its first row only.
func TGIThroughputTable(r *micro.BatchResult) string {
	return tgiTable(tgiRows([]string{"Step", "Batch Size", "Average", "Lowest", "Highest"}, r,
		[]tgiStep{{"Prefill", micro.BatchPoint.PrefillTPS}, {"Decode", micro.BatchPoint.DecodeTPS}},
		func(st micro.BatchStats) []string {
			return []string{tgiValue(st.Avg, "tokens/secs"), tgiValue(st.Min, "tokens/secs"), tgiValue(st.Max, "tokens/secs")}
		}))
}

// tgiStep is one Step of a TGI table: its name and the figure of each run.
type tgiStep struct {
	name string
	get  func(micro.BatchPoint) []float64
}

// tgiRows returns the header and a row per step and batch size with runs: the Step
// named on its first row (blank below, as TGI's merged cells), the batch size, then
// cells of the runs' statistics.
func tgiRows(header []string, r *micro.BatchResult, steps []tgiStep, cells func(micro.BatchStats) []string) [][]string {
	rows := [][]string{header}
	for _, s := range steps {
		name := s.name
		for _, p := range r.Points {
			if len(p.Runs) == 0 {
				continue
			}
			rows = append(rows, append([]string{name, strconv.Itoa(p.BatchSize)}, cells(micro.StatsOf(s.get(p)))...))
			name = ""
		}
	}
	return rows
}

// tgiLauncherTable is the table of how the model was served: for the engine, its
// backend, threads and KV cache type; for a server, its kind and URL.
func tgiLauncherTable(r *micro.BatchResult) string {
	s := r.Spec
	rows := [][]string{{"Parameter", "Value"}}
	if r.Approximate {
		rows = append(rows, []string{"Backend", s.Backend}, []string{"URL", s.BaseURL})
	} else {
		rows = append(rows, []string{"Backend", r.Backend}, []string{"Model Type", r.ModelType},
			[]string{"Threads", strconv.Itoa(r.Threads)}, []string{"KV Cache Type", s.KVType})
	}
	return tgiTable(rows)
}

// tgiParametersTable is TGI's table of the experiment's parameters, the unset
// sampling options as TGI prints them (None), the set ones as Some(value).
func tgiParametersTable(r *micro.BatchResult) string {
	s := r.Spec
	rows := [][]string{{"Parameter", "Value"},
		{"Model", r.Model},
		{"Sequence Length", strconv.Itoa(s.SequenceLength)},
		{"Decode Length", strconv.Itoa(s.DecodeLength)},
		{"N Runs", strconv.Itoa(s.Runs)},
		{"Warmups", strconv.Itoa(s.NWarmups())},
		{"Temperature", rustOptFloat(s.Temperature)},
		{"Top K", rustOptInt(s.TopK)},
		{"Top P", rustOptFloat(s.TopP)},
		{"Typical P", rustOptFloat(s.TypicalP)},
		{"Repetition Penalty", rustOptFloat(s.RepetitionPenalty)},
		{"Watermark", strconv.FormatBool(s.Watermark)},
		{"Do Sample", strconv.FormatBool(s.DoSample)},
	}
	return tgiTable(rows)
}

// rustOptFloat prints an optional float as Rust's Debug prints Option<f32>: None, or
// Some(0.5) (an integral value keeps ".0").
func rustOptFloat(v *float64) string {
	if v == nil {
		return "None"
	}
	s := strconv.FormatFloat(float64(*v), 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return "Some(" + s + ")"
}

// rustOptInt prints an optional integer as Rust's Debug prints Option<u32>.
func rustOptInt(v *int) string {
	if v == nil {
		return "None"
	}
	return "Some(" + strconv.Itoa(*v) + ")"
}

// tgiValue formats a figure as TGI: two decimals and the unit.
func tgiValue(v float64, unit string) string { return fmt.Sprintf("%.2f %s", v, unit) }

// tgiTable renders rows (the first the header) as the markdown tables TGI prints:
// every column padded to its widest cell with one space on each side, left-aligned,
// the separator row all dashes.
func tgiTable(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + mdCell(c) + strings.Repeat(" ", widths[i]-len([]rune(c))) + " |")
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|")
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2) + "|")
	}
	b.WriteString("\n")
	for _, row := range rows[1:] {
		line(row)
	}
	return b.String()
}

// tgiSeries are the figures of both tables under the names the CSV and JSON exports
// give them.
var tgiSeries = []struct {
	name, unit string
	get        func(micro.BatchPoint) []float64
}{{"prefill", "ms", micro.BatchPoint.PrefillMs}, {"decode_token", "ms", micro.BatchPoint.DecodeTokenMs}, {"decode_total", "ms", micro.BatchPoint.DecodeTotalMs},
	{"prefill_throughput", "tokens/secs", micro.BatchPoint.PrefillTPS}, {"decode_throughput", "tokens/secs", micro.BatchPoint.DecodeTPS}}

// tgiCSV writes one row per (step, batch size) with the latency figures in ms and the
// throughput figures in tokens/secs, then run_partial.
func tgiCSV(w io.Writer, r *micro.BatchResult, partial bool) error {
	var b bytes.Buffer
	b.WriteString("label,model,backend,threads,sequence_length,decode_length,step,batch_size,runs,unit,average,lowest,highest,p50,p90,p99,approximate,run_partial\n")
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range tgiSeries {
		for _, p := range r.Points {
			if len(p.Runs) == 0 {
				continue
			}
			st := micro.StatsOf(s.get(p))
			cells := []string{r.Label, r.Model, r.Backend, strconv.Itoa(r.Threads), strconv.Itoa(r.Spec.SequenceLength), strconv.Itoa(r.Spec.DecodeLength),
				s.name, strconv.Itoa(p.BatchSize), strconv.Itoa(len(p.Runs)), s.unit,
				f(st.Avg), f(st.Min), f(st.Max), f(st.P50), f(st.P90), f(st.P99), strconv.FormatBool(r.Approximate), strconv.FormatBool(partial)}
			for i := range cells {
				cells[i] = csvQuote(cells[i])
			}
			b.WriteString(strings.Join(cells, ",") + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// tgiDefinitions states how the batch figures are computed.
var tgiDefinitions = map[string]string{
	"prefill":            "one forward pass over every sequence's prompt (batch_size × sequence_length tokens) and the sampling of each one's first token, ms per run",
	"decode_token":       "a run's whole decode over its decode steps (decode_length − 1, the prefill sampled the first token), ms, as TGI",
	"decode_total":       "from the end of the prefill to the end of the last decode step, ms per run",
	"prefill_throughput": "batch_size / prefill latency, tokens per second, as TGI",
	"decode_throughput":  "batch_size × decode steps / decode total, tokens per second, as TGI",
	"statistics":         "average, lowest and highest over the runs; p50, p90 and p99 with linear interpolation between the sorted runs (numpy's default)",
	"decode_steps_ns":    "each decode step's own duration, nanoseconds (kept, not tabled)",
}

// tgiJSON sets the batch benchmark's fields of the JSON export: the result (spec,
// model, label, every run of every point) and the tables' figures per step.
func tgiJSON(o *vllmObject, r *micro.BatchResult) {
	o.set("kind", "batch")
	o.set("batch", r)
	type row struct {
		Step      string           `json:"step"`
		BatchSize int              `json:"batch_size"`
		Unit      string           `json:"unit"`
		Stats     micro.BatchStats `json:"stats"`
	}
	var rows []row
	for _, s := range tgiSeries {
		for _, p := range r.Points {
			if len(p.Runs) > 0 {
				rows = append(rows, row{s.name, p.BatchSize, s.unit, micro.StatsOf(s.get(p))})
			}
		}
	}
	o.set("tables", rows)
	if r.Approximate {
		o.set("approximation", micro.ApproximationNote)
	}
	o.set("metric_definitions", tgiDefinitions)
}

// ReadTGIRun reads the batch run of one of llmbench's JSON exports, for TGIReport to
// put beside others in one report.
func ReadTGIRun(name string, rd io.Reader) (*micro.BatchResult, error) {
	var doc struct {
		Kind  string             `json:"kind"`
		Batch *micro.BatchResult `json:"batch"`
	}
	if err := json.NewDecoder(rd).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if doc.Kind != "batch" || doc.Batch == nil {
		return nil, fmt.Errorf("%s: not the JSON export of a batch run (kind %q)", name, doc.Kind)
	}
	if doc.Batch.Spec.Backend == "" {
		doc.Batch.Spec = doc.Batch.Spec.WithDefaults()
	}
	return doc.Batch, nil
}

// TGIMergeFiles writes one TGIReport of the batch runs in llmbench's JSON exports at
// paths, a section each, in order.
func TGIMergeFiles(w io.Writer, paths ...string) error {
	var runs []*micro.BatchResult
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		r, err := ReadTGIRun(p, f)
		f.Close()
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	return TGIReport(w, runs...)
}

// tgiCharts draws the run against batch size: the average prefill and per-token
// decode latency (ms), and the average decode throughput (tokens/s).
func tgiCharts(r *micro.BatchResult) []string {
	lat := []xySeries{{name: "Prefill"}, {name: "Decode (token)"}}
	thr := []xySeries{{name: "Decode"}}
	for _, p := range r.Points {
		if len(p.Runs) == 0 {
			continue
		}
		x := float64(p.BatchSize)
		pre, tok, dec := micro.StatsOf(p.PrefillMs()).Avg, micro.StatsOf(p.DecodeTokenMs()).Avg, micro.StatsOf(p.DecodeTPS()).Avg
		lat[0].pts = append(lat[0].pts, xyPoint{x, pre, num(pre)})
		lat[1].pts = append(lat[1].pts, xyPoint{x, tok, num(tok)})
		thr[0].pts = append(thr[0].pts, xyPoint{x, dec, num(dec)})
	}
	if len(thr[0].pts) == 0 {
		return nil
	}
	sub := r.Label
	if r.Approximate {
		sub += " · approximation (measured from outside the server)"
	}
	return []string{
		lineSVG("tgi-latency", "Latency vs batch size", sub, "batch size", "ms", lat),
		lineSVG("tgi-throughput", "Decode throughput vs batch size", sub, "batch size", "tokens/s", thr),
	}
}
