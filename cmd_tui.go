package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"llmbench/engine/synth"
	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads/discover"
	"llmbench/workloads/jobs"
	"llmbench/workloads/result"
	runcore "llmbench/workloads/run"
	"llmbench/workloads/store"
	"llmbench/workloads/telemetry"
)

// runTUI opens the terminal workbench.
func runTUI(ctx context.Context, args []string) error {
	fs := newFlags("tui", "[--device auto|nvml|fake|none] [--dir DIR]", nil)
	devKind := fs.String("device", "auto", "GPUs for telemetry: auto (NVML when present), nvml, fake (scripted H100) or none")
	dir := fs.String("dir", ".", "folder whose *.gguf files the Setup screen offers")
	dataDir := fs.String("data-dir", "", "results store `dir` the History screen lists (default $LLMBENCH_HOME, else $XDG_DATA_HOME/llmbench, else ~/.local/share/llmbench)")
	if err := parse(fs, args); err != nil {
		return err
	}
	dev, err := jobs.OpenDevice(*devKind, warn)
	if err != nil {
		return usageErr("tui", err)
	}
	defer dev.Close()
	of := &outputFlags{dataDir: *dataDir}
	st, err := of.store()
	if err != nil {
		warn(fmt.Sprintf("llmbench tui: warning: %v; runs are kept for this session only", err))
	}
	return openWorkbench(ctx, st, dev, *dir, nil)
}

// openWorkbench runs the TUI until it quits: Setup offers the .gguf files of dir,
// every run is a job (workloads/jobs, as headless) measured with dev's telemetry and
// kept in st (in memory when st is nil), and queue gives the runs started at launch.
func openWorkbench(ctx context.Context, st *store.Store, dev *jobs.Device, dir string, queue []tui.QueuedRun) error {
	cpu := telemetry.CPUInfo()
	gpu := "GPU: none (" + dev.Note + ")"
	if name := dev.GPUName(); name != "" {
		gpu = "GPU: " + name
	}
	env := dev.Env(version)
	o := tui.Options{
		Theme:  theme.FromEnv(),
		Files:  setupFiles(ctx, dir),
		Device: fmt.Sprintf("CPU: %s · %s", cpu.Model, gpu),
		Start:  tuiStarter(dev, st),
		Env:    env,
		Queue:  queue,
		SaveProfile: func(c setup.Config, path string) error {
			return profiles.Save(path, tui.ProfileOf(c))
		},
		Power:      setup.Power(dev.PowerRange()),
		CheckModel: discover.CheckModelFile,
		PlanSynthetic: func(shape, typ string) (setup.Plan, error) {
			p, err := synth.Cache{}.Plan(shape, typ, synth.DefaultSeed)
			return setup.Plan{Note: strings.TrimPrefix(p.String(), p.Spec.String()+": "), Fits: p.Fits()}, err
		},
		Detect: func(url string) (string, error) {
			hc := &http.Client{Timeout: 3 * time.Second}
			return jobs.FirstModel(ctx, hc, strings.TrimRight(url, "/"), nil)
		},
	}
	if st != nil {
		o.Store = tuiStore{st}
	}
	_, err := tea.NewProgram(tui.New(o), tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// tuiStarter runs a Setup config as the job it describes: the same job, through the
// same workloads/jobs path, as `llmbench run` of the profile Setup saves.
func tuiStarter(dev *jobs.Device, st *store.Store) tui.Starter {
	return func(c setup.Config) (runcore.Workload, string, []runcore.Option, error) {
		job := tui.ProfileOf(c).Runs[0]
		o := jobs.Options{Device: dev, Store: st, Build: version}
		if err := jobs.Check(job, o); err != nil {
			return nil, "", nil, err
		}
		return jobs.Workload(job, o), dev.Note, []runcore.Option{runcore.WithSampler(dev.Sampler, telemetry.DefaultInterval)}, nil
	}
}

// tuiStore is the results store as the TUI sees it: History lists it; jobs keep
// their runs in it as they go, and Save keeps a run that finished elsewhere.
type tuiStore struct{ s *store.Store }

// List implements tui.Store.
func (t tuiStore) List() ([]tui.RunInfo, error) {
	list, err := t.s.List()
	out := make([]tui.RunInfo, len(list))
	for i, e := range list {
		out[i] = tui.RunInfo{ID: e.ID, Summary: e.Summary}
	}
	return out, err
}

// Load implements tui.Store.
func (t tuiStore) Load(id string) (result.Document, error) { return t.s.Load(id) }

// Delete implements tui.Store.
func (t tuiStore) Delete(id string) error { return t.s.Delete(id) }

// Save implements tui.Store.
func (t tuiStore) Save(d result.Document) (string, error) { return t.s.Save(d) }

// setupFiles lists the GGUF models found on this machine (workloads/discover: the
// folder dir, LLMBENCH_MODELS, llama.cpp's, Hugging Face's, ollama's and LM Studio's
// caches) for Setup, with where each was found and, for one that cannot run, why.
func setupFiles(ctx context.Context, dir string) []setup.File {
	env := discover.OSEnv()
	env.Dir = dir
	var out []setup.File
	for _, m := range discover.Find(ctx, env).Models {
		f := setup.File{Name: m.Name, Path: m.Path, Size: m.Size, Type: m.Type, Where: string(m.Source)}
		if m.Err != nil {
			f.Err = m.Err.Error()
		}
		out = append(out, f)
	}
	return out
}
