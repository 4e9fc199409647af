package main

// What the measuring commands share: the output and telemetry flags, and the one
// call that runs a job headless.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	xterm "github.com/charmbracelet/x/term"

	"llmbench/profiles"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/power"
	"llmbench/workloads/report"
	"llmbench/workloads/store"
	"llmbench/workloads/telemetry"
)

// outputFlags are the flags every measuring command shares: where the results
// store lives and which files to export the finished run to.
type outputFlags struct {
	dataDir, export string
}

func addOutputFlags(fs *flag.FlagSet) *outputFlags {
	o := &outputFlags{}
	fs.StringVar(&o.export, "export", "", "also write the run to these `files`, comma-separated; the extension picks the format ("+strings.Join(report.ExportFormats(), ", ")+")")
	fs.StringVar(&o.dataDir, "data-dir", "", "results store `dir` (default $LLMBENCH_HOME, else $XDG_DATA_HOME/llmbench, else ~/.local/share/llmbench)")
	return o
}

// exports returns the --export paths (jobs.Check refuses a bad one before anything runs).
func (o *outputFlags) exports() ([]string, error) {
	if strings.TrimSpace(o.export) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(o.export, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, fmt.Errorf("--export: empty file name in the list")
		}
		out = append(out, p)
	}
	return out, nil
}

// store opens the results store.
func (o *outputFlags) store() (*store.Store, error) {
	dir, err := store.DataDir(o.dataDir)
	if err != nil {
		return nil, err
	}
	return store.OpenStore(dir)
}

// keeper opens the store for a command's runs: one that cannot be opened costs a
// warning, and the runs are not kept.
func (o *outputFlags) keeper(cmd string) *store.Store {
	s, err := o.store()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: warning: the run is not kept in the results store: %v\n", cmd, err)
		return nil
	}
	return s
}

// telemetryFlags are the telemetry and power-limit flags of bench and serve-bench.
type telemetryFlags struct {
	device, limitList string
	interval, settle  time.Duration
}

func addTelemetryFlags(fs *flag.FlagSet) *telemetryFlags {
	t := &telemetryFlags{}
	fs.StringVar(&t.device, "device", "auto", "GPUs for telemetry and power limits: auto (NVML when present), nvml, fake (scripted H100 for tests) or none")
	fs.StringVar(&t.limitList, "power-limit", "", "run everything at each GPU power limit in `watts` (600,500,…), restoring the original limit afterwards (needs root and NVML)")
	fs.DurationVar(&t.interval, "sample-interval", telemetry.DefaultInterval, "telemetry sampling period on the run clock (0 = no telemetry)")
	fs.DurationVar(&t.settle, "settle-timeout", jobs.DefaultSettle, "longest wait for the power draw to settle after setting a limit")
	return t
}

// limits parses --power-limit (nil when not given).
func (t *telemetryFlags) limits() ([]float64, error) {
	if t.interval < 0 {
		return nil, fmt.Errorf("--sample-interval %v is negative", t.interval)
	}
	if t.limitList == "" {
		return nil, nil
	}
	l, err := power.ParseLimits(t.limitList)
	if err != nil {
		return nil, fmt.Errorf("--power-limit: %w", err)
	}
	return l, nil
}

// headless runs job without the TUI for command cmd: it opens the device, checks the
// job (a bad value is a usage error, nothing runs), and prints as jobs.Headless does.
// configure, when not nil, sets the command's own options.
func headless(ctx context.Context, cmd string, job workloads.Job, tf *telemetryFlags, of *outputFlags, configure func(*jobs.Options), progress jobs.Progress, format report.LlamaBenchFunc) error {
	exports, err := of.exports()
	if err != nil {
		return usageErr(cmd, err)
	}
	dev, err := jobs.OpenDevice(job.Device, warn)
	if err != nil {
		return usageErr(cmd, err)
	}
	defer dev.Close()
	o := jobs.Options{Device: dev, Exports: exports, Build: version, Settle: tf.settle}
	if configure != nil {
		configure(&o)
	}
	if err := dev.CheckLimits(job.PowerLimitW); err != nil {
		return err // one line saying why; nothing changed
	}
	if err := jobs.Check(job, o); err != nil {
		return usageErr(cmd, err)
	}
	o.Store = of.keeper(cmd)
	_, err = jobs.Headless(ctx, job, o, jobs.Terminal{Stdout: os.Stdout, Stderr: os.Stderr, Progress: progress, Interval: tf.interval, BenchFormat: format})
	return err
}

// warn prints a line on stderr.
func warn(line string) { fmt.Fprintln(os.Stderr, line) }

// isTerminal reports whether f is a terminal (a character device such as /dev/null
// is not).
func isTerminal(f *os.File) bool { return xterm.IsTerminal(f.Fd()) }

// terminalProgress is the progress a headless run shows: a bar on a terminal, lines otherwise.
func terminalProgress() jobs.Progress {
	if isTerminal(os.Stderr) {
		return jobs.ProgressBar
	}
	return jobs.ProgressLines
}

// runSlug names run i of a profile in export file names.
func runSlug(r profiles.Run, i int) string {
	if r.Name == "" {
		return fmt.Sprint(i + 1)
	}
	return strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == ' ' || c == ':' {
			return '-'
		}
		return c
	}, r.Name)
}

// suffixed inserts "-suffix" before each path's extension.
func suffixed(paths []string, suffix string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		ext := filepath.Ext(p)
		out[i] = strings.TrimSuffix(p, ext) + "-" + suffix + ext
	}
	return out
}

// runHistory prints the stored runs, newest first.
func runHistory(w io.Writer, of *outputFlags) error {
	s, err := of.store()
	if err != nil {
		return err
	}
	list, err := s.List()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tSTATUS\tKIND\tMODEL\tHEADLINE")
	for _, e := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Started.Local().Format("2006-01-02 15:04:05"), e.Status, e.Kind, e.Model, e.Headline)
	}
	return tw.Flush()
}
