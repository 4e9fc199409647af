package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
	runcore "llmbench/workloads/run"
	"llmbench/workloads/store"
	"llmbench/workloads/telemetry"
)

func runRun(ctx context.Context, args []string) error {
	fs := newFlags("run", "PROFILE.yaml | builtin:NAME | store:ID [--headless] [--export FILES] [--dataset-path FILE] [--device KIND] [--data-dir DIR]\n"+
		"       llmbench run --list | --show builtin:NAME | --history", nil)
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
		return usageErr("run", errors.New("give one profile: a YAML file or builtin:NAME (llmbench run --list)"))
	}
	arg := positional[0]
	if *show {
		b, err := profiles.BuiltinYAML(arg)
		if err != nil {
			return usageErr("run", err)
		}
		_, err = os.Stdout.Write(b)
		return err
	}
	exports, err := of.exports()
	if err != nil {
		return usageErr("run", err)
	}
	p, err := loadProfile(arg, of, *datasetPath)
	if err != nil {
		return usageErr("run", err)
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
// one before it ends, is shown Live, ends on Results and is kept in the store. Every
// run is checked before the screen opens, so a bad profile costs one line on stderr
// and no TUI.
func runProfileTUI(ctx context.Context, p *profiles.Profile, of *outputFlags) error {
	devs := jobs.NewDevices(warn)
	defer devs.Close()
	st := of.keeper("run")
	q := make([]tui.QueuedRun, len(p.Runs))
	for i, r := range p.Runs {
		o, err := profileOptions(devs, st, r, nil)
		if err != nil {
			return err
		}
		q[i] = tui.QueuedRun{Title: r.Title(), Serve: r.Serve != nil, Kernels: r.Kernels != nil,
			Rows: tui.ThroughputRows(r),
			Start: func() (runcore.Workload, string, []runcore.Option, error) {
				return jobs.Workload(r, o), o.Device.Note, []runcore.Option{runcore.WithSampler(o.Device.Sampler, telemetry.DefaultInterval)}, nil
			}}
	}
	first, err := devs.Get(p.Runs[0].Device)
	if err != nil {
		return usageErr("run", err)
	}
	return openWorkbench(ctx, st, first, ".", q)
}

// profileOptions returns how run r of a profile is run (its device, opened once per
// kind, the store, exports), checked by jobs.Check: a bad run is a usage error.
func profileOptions(devs *jobs.Devices, st *store.Store, r profiles.Run, exports []string) (jobs.Options, error) {
	dev, err := devs.Get(r.Device)
	o := jobs.Options{Device: dev, Store: st, Exports: exports, Build: version}
	if err == nil {
		err = jobs.Check(r, o)
	}
	if err != nil {
		return o, usageErr("run", fmt.Errorf("%s: %w", r.Title(), err))
	}
	return o, nil
}

// runProfile runs every run of p in order, headless, each kept in the store and
// exported; every run is checked first, and it stops at the first run that fails or
// is interrupted.
func runProfile(ctx context.Context, p *profiles.Profile, of *outputFlags, exports []string) error {
	devs := jobs.NewDevices(warn)
	defer devs.Close()
	st := of.keeper("run")
	opts := make([]jobs.Options, len(p.Runs))
	for i, r := range p.Runs {
		paths := exports
		if len(p.Runs) > 1 {
			paths = suffixed(exports, runSlug(r, i))
		}
		o, err := profileOptions(devs, st, r, paths)
		if err != nil {
			return err
		}
		opts[i] = o
	}
	term := jobs.Terminal{Stdout: os.Stdout, Stderr: os.Stderr, Progress: terminalProgress(), Interval: telemetry.DefaultInterval}
	done := make([]*result.Stored, len(p.Runs))
	for i, r := range p.Runs {
		fmt.Fprintf(os.Stderr, "run: [%d/%d] %s\n", i+1, len(p.Runs), r.Title())
		t0 := time.Now()
		var err error
		done[i], err = jobs.Headless(ctx, r, opts[i], term)
		fmt.Fprintf(os.Stderr, "run: %s: %.1f s\n", r.Title(), time.Since(t0).Seconds())
		if err != nil {
			return err
		}
	}
	if p.Compare == profiles.CompareAB {
		return report.ServeABPoints(os.Stdout, p.Runs[0].Title(), p.Runs[1].Title(), done[0].Doc.Serving, done[1].Doc.Serving)
	}
	return nil
}

// storePrefix names a stored run on the command line ("store:ID", the ids of
// llmbench run --history): run it again.
const storePrefix = "store:"

// loadProfile reads the profile arg names (a file, builtin:NAME, store:ID) and
// resolves its dataset paths (datasetPath overrides them): relative to the file, the
// current folder, then the binary's folders.
func loadProfile(arg string, of *outputFlags, datasetPath string) (*profiles.Profile, error) {
	var p *profiles.Profile
	var dirs []string
	var err error
	switch {
	case strings.HasPrefix(arg, profiles.BuiltinPrefix):
		p, err = profiles.Builtin(arg)
	case strings.HasPrefix(arg, storePrefix):
		var st *store.Store
		if st, err = of.store(); err == nil {
			p, err = profiles.Stored(st, strings.TrimPrefix(arg, storePrefix))
		}
	default:
		p, err = profiles.LoadFile(arg)
		dirs = append(dirs, filepath.Dir(arg))
	}
	if err != nil {
		return nil, err
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	if exe, err := os.Executable(); err == nil {
		for d, i := filepath.Dir(exe), 0; i < 3; d, i = filepath.Dir(d), i+1 {
			dirs = append(dirs, d)
		}
	}
	return p, profiles.ResolveDatasets(p, datasetPath, dirs)
}
