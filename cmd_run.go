package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/workloads/micro"
	"llmbench/workloads/power"
	"llmbench/workloads/report"
	runcore "llmbench/workloads/run"
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

// exports returns the --export paths, refusing an unknown extension before anything runs.
func (o *outputFlags) exports() ([]string, error) {
	if strings.TrimSpace(o.export) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(o.export, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, errors.New("--export: empty file name in the list")
		}
		if _, err := report.ExportFunc(p); err != nil {
			return nil, fmt.Errorf("--export: %w", err)
		}
		if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--export %s: folder %s does not exist", p, filepath.Dir(p))
		}
		out = append(out, p)
	}
	return out, nil
}

// store opens the results store.
func (o *outputFlags) store() (*profiles.Store, error) {
	dir, err := profiles.DataDir(o.dataDir)
	if err != nil {
		return nil, err
	}
	return profiles.OpenStore(dir)
}

// record is a run being kept in the results store (nil-safe: a run whose record
// could not be created goes on without one, as the warning said).
type record struct {
	w     *profiles.Writer
	store *profiles.Store
}

// startRecord creates the store record of run (created "running"); a store that
// cannot be written costs a warning, not the run.
func (o *outputFlags) startRecord(cmd string, run profiles.Run, dev *telemetryDevice) *record {
	s, err := o.store()
	if err == nil {
		var w *profiles.Writer
		if w, err = s.Create(keptProfile(run), recordEnv(dev)); err == nil {
			return &record{w: w, store: s}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: warning: the run is not kept in the results store: %v\n", cmd, err)
	return nil
}

// keptProfile is the profile a stored run keeps: the run alone, its dataset path
// absolute, so that store:ID runs it again from any folder.
func keptProfile(run profiles.Run) profiles.Profile {
	if run.Serve != nil && run.Serve.Dataset.Path != "" && !filepath.IsAbs(run.Serve.Dataset.Path) {
		sp := *run.Serve
		if abs, err := filepath.Abs(sp.Dataset.Path); err == nil {
			sp.Dataset.Path = abs
			run.Serve = &sp
		}
	}
	return profiles.Profile{Schema: profiles.SchemaVersion, Name: run.Name, Runs: []profiles.Run{run}}
}

// finish ends the record with the final document and writes the --export files.
// It reports the first export error (the store's errors are warnings).
func (r *record) finish(cmd string, doc report.Document, runErr error, exports []string) error {
	if runErr != nil && errors.Is(runErr, context.Canceled) {
		runErr, doc.Partial = nil, true
	}
	if r != nil {
		if err := r.w.Finish(doc, runErr); err != nil {
			fmt.Fprintf(os.Stderr, "%s: warning: results store: %v\n", cmd, err)
		} else {
			fmt.Fprintf(os.Stderr, "%s: saved run %s in %s\n", cmd, r.w.ID(), r.store.Dir())
		}
	}
	if doc.Bench == nil && len(doc.Serving) == 0 {
		return nil // nothing ran: nothing to export
	}
	var first error
	for _, p := range exports {
		if err := report.Export(p, doc); err != nil {
			first = cmp(first, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: exported %s\n", cmd, p)
	}
	return first
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// recordEnv describes this machine, build and telemetry for a stored run.
func recordEnv(dev *telemetryDevice) []report.KV {
	extra := []report.KV{{Key: "build", Value: "llmbench " + version}}
	if dev != nil {
		gpu := "none"
		if dev.gpus != nil && dev.gpus.Count() > 0 {
			if g, err := dev.gpus.Read(0); err == nil {
				gpu = g.Name
			}
		}
		extra = append(extra, report.KV{Key: "gpu", Value: gpu}, report.KV{Key: "telemetry", Value: dev.note})
	}
	return profiles.Environment(extra...)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressMode says how a run shows its progress on stderr.
type progressMode int

const (
	progressNone  progressMode = iota
	progressBar                // redrawn in place (a terminal, or serve-bench's tqdm-style bar)
	progressLines              // a plain line now and then (not a terminal)
)

// runProgress is the progress a headless run shows: a bar on a terminal, lines otherwise.
func runProgress() progressMode {
	if isTerminal(os.Stderr) {
		return progressBar
	}
	return progressLines
}

// bar draws a progress bar of width cells.
func bar(done, total float64, width int) string {
	n := 0
	if total > 0 {
		n = min(width, max(0, int(float64(width)*done/total)))
	}
	return strings.Repeat("█", n) + strings.Repeat(" ", width-n)
}

func runRun(ctx context.Context, args []string) error {
	fs := newFlags("run", "PROFILE.yaml | builtin:NAME | store:ID [--headless] [--export FILES] [--dataset-path FILE] [--device KIND] [--data-dir DIR]\n"+
		"       llmbench run --list | --show builtin:NAME | --history")
	headless := fs.Bool("headless", false, "run without the TUI, printing results on stdout and progress on stderr (the default when stdout is not a terminal)")
	list := fs.Bool("list", false, "list the built-in profiles")
	show := fs.Bool("show", false, "print a built-in profile's YAML (to copy and edit)")
	history := fs.Bool("history", false, "list the runs kept in the results store, newest first")
	datasetPath := fs.String("dataset-path", "", "dataset `file` for every serve run of the profile (overrides the profile's)")
	devKind := fs.String("device", "", "GPUs for telemetry and power limits, overriding the profile's: auto, nvml, fake or none")
	of := addOutputFlags(fs)
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *list:
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		for _, b := range profiles.Builtins() {
			fmt.Fprintf(w, "%s%s\t%s\n", profiles.BuiltinPrefix, b.Name, b.Description)
		}
		return w.Flush()
	case *history:
		return runHistory(os.Stdout, of)
	}
	if len(positional) != 1 {
		return benchUsageErr("run", errors.New("give one profile: a YAML file or builtin:NAME (llmbench run --list)"))
	}
	arg := positional[0]
	if *show {
		b, err := profiles.BuiltinYAML(arg)
		if err != nil {
			return benchUsageErr("run", err)
		}
		_, err = os.Stdout.Write(b)
		return err
	}
	exports, err := of.exports()
	if err != nil {
		return benchUsageErr("run", err)
	}
	var p *profiles.Profile
	var dirs []string
	switch {
	case strings.HasPrefix(arg, profiles.BuiltinPrefix):
		p, err = profiles.Builtin(arg)
	case strings.HasPrefix(arg, storePrefix):
		var st *profiles.Store
		if st, err = of.store(); err == nil {
			p, err = st.Profile(strings.TrimPrefix(arg, storePrefix))
		}
	default:
		p, err = profiles.LoadFile(arg)
		dirs = append(dirs, filepath.Dir(arg))
	}
	if err != nil {
		return benchUsageErr("run", err)
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	if exe, err := os.Executable(); err == nil {
		for d, i := filepath.Dir(exe), 0; i < 3; d, i = filepath.Dir(d), i+1 {
			dirs = append(dirs, d)
		}
	}
	if err := profiles.ResolveDatasets(p, *datasetPath, dirs); err != nil {
		return benchUsageErr("run", err)
	}
	if *devKind != "" {
		for i := range p.Runs {
			p.Runs[i].Device = *devKind
		}
	}
	if !*headless && isTerminal(os.Stdout) && isTerminal(os.Stdin) {
		if len(exports) == 0 {
			return runProfileTUI(ctx, p, of)
		}
		fmt.Fprintln(os.Stderr, "run: --export runs the profile headless (in the TUI, e on Results exports a run)")
	}
	return runProfile(ctx, p, of, exports)
}

// runProfileTUI opens the workbench with the runs of p queued: each starts when the
// one before it ends, is shown Live, ends on Results and is kept in the store. The
// devices, power limits and bench specs are checked before the screen opens, so a
// bad profile costs one line on stderr and no TUI.
func runProfileTUI(ctx context.Context, p *profiles.Profile, of *outputFlags) error {
	devs := map[string]*telemetryDevice{}
	defer func() {
		for _, d := range devs {
			d.Close()
		}
	}()
	var first *telemetryDevice
	for _, r := range p.Runs {
		kind := cmpStr(r.Device, "auto")
		dev := devs[kind]
		if dev == nil {
			var err error
			if dev, err = openTelemetry(kind); err != nil {
				return benchUsageErr("run", err)
			}
			devs[kind] = dev
		}
		if first == nil {
			first = dev
		}
		if len(r.PowerLimitW) > 0 {
			if err := power.Check(dev.gpus, dev.note, r.PowerLimitW, dev.stateFile()); err != nil {
				return err
			}
		}
		if r.Bench != nil {
			if err := micro.Validate(*r.Bench); err != nil {
				return benchUsageErr("run", fmt.Errorf("%s: %w", r.Title(), err))
			}
		}
	}
	return openWorkbench(ctx, of, first, ".", func(ts *tuiStore) []tui.QueuedRun {
		q := make([]tui.QueuedRun, len(p.Runs))
		for i, r := range p.Runs {
			dev := devs[cmpStr(r.Device, "auto")]
			q[i] = tui.QueuedRun{Title: r.Title(), Serve: r.Serve != nil,
				Start: func() (runcore.Workload, string, []runcore.Option, error) {
					return profileWorkload(r, dev, ts), dev.note, []runcore.Option{runcore.WithSampler(dev.sampler, telemetry.DefaultInterval)}, nil
				}}
		}
		return q
	})
}

// profileWorkload is run r of a profile as one TUI workload: the same jobs as the
// headless run (every power limit, every sweep point), on the TUI run's Reporter,
// their messages in its log, kept in the store as it goes.
func profileWorkload(r profiles.Run, dev *telemetryDevice, ts *tuiStore) runcore.Workload {
	return runcore.Func{Label: r.Kind(), F: func(ctx context.Context, rep *runcore.Reporter) (any, error) {
		dev.logf = rep.Logf
		defer func() { dev.logf = nil }()
		var rec *record
		if w := ts.beginProfile(keptProfile(r)); w != nil {
			rec = &record{w: w, store: ts.s}
		}
		if r.Bench != nil {
			job := &benchJob{spec: *r.Bench, dev: dev, limits: r.PowerLimitW, settle: 15 * time.Second, live: rep}
			return job.execute(ctx, rec)
		}
		job := &serveJob{readyTimeout: 600, dev: dev, settle: 15 * time.Second, live: rep}
		return job.execute(ctx, r, rec)
	}}
}

// logTo writes a message of a job to its TUI run's log, or as a line on w when
// headless (live nil).
func logTo(live *runcore.Reporter, w io.Writer, format string, a ...any) {
	if live != nil {
		live.Logf(format, a...)
		return
	}
	fmt.Fprintf(w, format+"\n", a...)
}

// runOn runs w on live, the Reporter of the TUI run it is part of, and returns the
// Done the run core would give it (partial when cancelled).
func runOn(ctx context.Context, live *runcore.Reporter, w runcore.Workload) runcore.Done {
	res, err := w.Run(ctx, live)
	return runcore.Ended(ctx, live, res, err)
}

// parseInterspersed parses flags before and after the positional arguments
// ("run builtin:x --headless"), returning the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := benchParse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// storePrefix names a stored run on the command line ("store:ID", the ids of
// llmbench run --history): run it again.
const storePrefix = "store:"

// runProfile runs every run of p in order, headless, each kept in the store and
// exported; it stops at the first run that fails or is interrupted.
func runProfile(ctx context.Context, p *profiles.Profile, of *outputFlags, exports []string) error {
	for i, r := range p.Runs {
		paths := exports
		if len(p.Runs) > 1 {
			paths = suffixed(exports, runSlug(r, i))
		}
		name := r.Title()
		fmt.Fprintf(os.Stderr, "run: [%d/%d] %s\n", i+1, len(p.Runs), name)
		t0 := time.Now()
		var err error
		if r.Bench != nil {
			err = runProfileBench(ctx, r, of, paths)
		} else {
			err = runProfileServe(ctx, r, of, paths)
		}
		fmt.Fprintf(os.Stderr, "run: %s: %.1f s\n", name, time.Since(t0).Seconds())
		if err != nil {
			return err
		}
	}
	return nil
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
