package jobs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
	"llmbench/workloads/telemetry"
)

// Progress says how a headless run shows its progress on stderr.
type Progress int

// The ways a headless run shows progress.
const (
	ProgressNone  Progress = iota
	ProgressBar            // redrawn in place (a terminal, or serve-bench's tqdm-style bar)
	ProgressLines          // a plain line now and then (not a terminal)
)

// Terminal is where a headless run writes: results on Stdout, progress and log lines
// on Stderr.
type Terminal struct {
	Stdout, Stderr io.Writer
	Progress       Progress
	// Interval is the telemetry sampling period (0: no telemetry).
	Interval time.Duration
	// BenchFormat prints a bench's result (llama-bench's -o format; nil: markdown).
	BenchFormat report.LlamaBenchFunc
}

// Headless runs job without the TUI, through the same Workload the TUI runs: vLLM's
// blocks (serve), llama-bench's table (bench), the suite's sections, notes and
// checks (kernels) or TGI's tables (batch) on t.Stdout as they are made,
// progress and the log on t.Stderr. An interrupted run returns context.Canceled
// after printing what it measured.
func Headless(ctx context.Context, job workloads.Job, o Options, t Terminal) (*result.Stored, error) {
	o.Headless = true
	var opts []run.Option
	if t.Interval > 0 {
		opts = append(opts, run.WithSampler(o.Device.Sampler, t.Interval))
	}
	_, events := run.Start(ctx, Workload(job, o), opts...)
	p := &printer{t: t, kind: job.Kind()}
	var done run.Done
	for ev := range events {
		if d, ok := ev.(run.Done); ok {
			done = d
			continue
		}
		p.event(ev)
	}
	p.clear()
	stored, _ := done.Result.(*result.Stored)
	err := done.Err
	if stored == nil {
		if err == nil {
			err = context.Canceled
		}
		return nil, err
	}
	doc := stored.Doc
	switch {
	case doc.Bench != nil:
		if len(doc.Bench.Records) > 0 || err == nil {
			f := t.BenchFormat
			if f == nil {
				f = report.LlamaBenchFormats["md"]
			}
			if perr := f(t.Stdout, doc.Bench); perr != nil && err == nil {
				err = perr
			}
		}
	case doc.Kernels != nil:
		fmt.Fprint(t.Stdout, doc.Kernels.Trailer())
	case doc.Batch != nil:
		if len(doc.Batch.Points) > 0 {
			if perr := report.TGIReport(t.Stdout, doc.Batch); perr != nil && err == nil {
				err = perr
			}
		}
	case len(doc.Serving) > 1 || len(doc.Serving) == 1 && len(job.PowerLimitW) > 1:
		if err == nil || done.Partial {
			report.VLLMSweepTable(t.Stdout, doc.Serving)
		}
	}
	if done.Partial || doc.IsPartial() && err == nil {
		err = context.Canceled
	}
	return stored, err
}

// printer draws a run's events on a terminal.
type printer struct {
	t     Terminal
	kind  string
	drawn bool   // a progress line is on screen, without its newline
	last  string // the last progress line printed (ProgressLines)
	tenth int
	live  string // the brief telemetry a bench's progress line ends with
}

func (p *printer) clear() {
	if p.drawn {
		fmt.Fprint(p.t.Stderr, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *printer) event(ev run.Event) {
	switch e := ev.(type) {
	case run.Log:
		p.clear()
		fmt.Fprintf(p.t.Stderr, "%s: %s\n", p.kind, e.Text)
	case run.Output:
		p.clear()
		p.output(e.Data)
	case run.Telemetry:
		if r, ok := e.Data.(telemetry.Reading); ok {
			p.live = liveTelemetry(r)
		}
	case run.Progress:
		p.progress(e)
	}
}

func (p *printer) output(data any) {
	w := p.t.Stdout
	switch d := data.(type) {
	case Console:
		fmt.Fprintln(w, string(d))
	case PointStarted:
		report.VLLMPreamble(w, &serving.Result{Spec: d.Spec})
		fmt.Fprintln(w, "Starting main benchmark run...")
		p.tenth = -1
	case kernelbench.Section:
		fmt.Fprint(w, d.Text)
	case kernelbench.Event: // a step of the suite: the progress line says it
	case PointDone:
		report.VLLMFailures(w, d.Result)
		report.VLLMBlock(w, d.Result)
		report.VLLMExtras(w, d.Result)
	}
}

func (p *printer) progress(e run.Progress) {
	if e.Total <= 0 || p.t.Progress == ProgressNone {
		return
	}
	w := p.t.Stderr
	if e.Unit != "requests" && e.Unit != "tests" && e.Unit != "cases" && e.Unit != "rounds" { // loading, writing a model
		if p.t.Progress == ProgressBar {
			fmt.Fprintf(w, "\r\x1b[K%s: %3.0f%%|%s| %s", p.kind, 100*e.Done/e.Total, bar(e.Done, e.Total, 20), e.Label)
			p.drawn = true
		}
		return
	}
	if p.kind == "bench" || p.kind == "kernels" || p.kind == "batch" {
		step := min(int(e.Done)+1, int(e.Total))
		if p.t.Progress == ProgressBar {
			fmt.Fprintf(w, "\r\x1b[K%s: %3.0f%%|%s| %d/%.0f %s%s", p.kind, 100*e.Done/max(e.Total, 1), bar(e.Done, e.Total, 20), step, e.Total, e.Label, p.live)
			p.drawn = true
			return
		}
		if line := fmt.Sprintf("%s: [%d/%.0f] %s", p.kind, step, e.Total, e.Label); line != p.last {
			fmt.Fprintln(w, line)
			p.last = line
		}
		return
	}
	if p.t.Progress == ProgressBar {
		fmt.Fprintf(w, "\r%3.0f%%|%s| %d/%d [%s]", 100*e.Done/e.Total, bar(e.Done, e.Total, 40), int(e.Done), int(e.Total), e.At.Truncate(time.Second))
		p.drawn = true
		return
	}
	if t := int(10 * e.Done / e.Total); t != p.tenth {
		p.tenth = t
		fmt.Fprintf(w, "serve-bench: %d/%d requests [%s]\n", int(e.Done), int(e.Total), e.At.Truncate(time.Second))
	}
}

// bar draws a progress bar of width cells.
func bar(done, total float64, width int) string {
	n := 0
	if total > 0 {
		n = min(width, max(0, int(float64(width)*done/total)))
	}
	return strings.Repeat("█", n) + strings.Repeat(" ", width-n)
}

// liveTelemetry is the brief reading a terminal progress line ends with.
func liveTelemetry(r telemetry.Reading) string {
	if w, ok := r.GPUPowerW(); ok {
		g := r.GPUs[0]
		return fmt.Sprintf(" · %s %.0f W %d°C %d MHz", r.GPULabel(), w, g.TempC, g.SMClockMHz)
	}
	if r.CPU.HasEnergy {
		return fmt.Sprintf(" · CPU %.0f W %.0f%%", r.CPU.PowerW, r.CPU.UtilAll)
	}
	return fmt.Sprintf(" · CPU %.0f%%", r.CPU.UtilAll)
}
