package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"

	"llmbench/engine"
	"llmbench/profiles"
	"llmbench/tui"
	"llmbench/tui/screens/setup"
	"llmbench/tui/theme"
	"llmbench/workloads"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	runcore "llmbench/workloads/run"
	"llmbench/workloads/serving"
	"llmbench/workloads/store"
	"llmbench/workloads/telemetry"
)

// runTUI opens the terminal workbench.
func runTUI(ctx context.Context, args []string) error {
	fs := newFlags("tui", "[--device auto|nvml|fake|none] [--dir DIR]")
	devKind := fs.String("device", "auto", "GPUs for telemetry: auto (NVML when present), nvml, fake (scripted H100) or none")
	dir := fs.String("dir", ".", "folder whose *.gguf files the Setup screen offers")
	dataDir := fs.String("data-dir", "", "results store `dir` the History screen lists (default $LLMBENCH_HOME, else $XDG_DATA_HOME/llmbench, else ~/.local/share/llmbench)")
	if err := benchParse(fs, args); err != nil {
		return err
	}
	dev, err := openTelemetry(*devKind)
	if err != nil {
		return benchUsageErr("tui", err)
	}
	defer dev.Close()
	return openWorkbench(ctx, &outputFlags{dataDir: *dataDir}, dev, *dir, nil)
}

// openWorkbench runs the TUI until it quits: Setup offers the .gguf files of dir,
// runs are measured with dev's telemetry and kept in of's store (in memory when it
// cannot be opened), and queue (nil: none) gives the runs started at launch.
func openWorkbench(ctx context.Context, of *outputFlags, dev *telemetryDevice, dir string, queue func(ts *tuiStore) []tui.QueuedRun) error {
	st0, err := of.store()
	if err != nil {
		fmt.Fprintf(os.Stderr, "llmbench tui: warning: %v; runs are kept for this session only\n", err)
	}
	cpu := telemetry.CPUInfo()
	gpu := "GPU: none (" + dev.note + ")"
	if dev.gpus != nil && dev.gpus.Count() > 0 {
		if g, err := dev.gpus.Read(0); err == nil {
			gpu = "GPU: " + g.Name
		}
	}
	ts := &tuiStore{s: st0, env: recordEnv(dev)}
	defer ts.end(nil) // quit mid-run: the record ends partial, with every sample so far
	var st tui.Store  // nil without a store: the TUI keeps the session's runs in memory
	if st0 != nil {
		st = ts
	}
	o := tui.Options{
		Theme:  theme.FromEnv(),
		Files:  setup.FindModels(dir),
		Device: fmt.Sprintf("CPU: %s · %s", cpu.Model, gpu),
		Start:  tuiStarter(dev, ts),
		Store:  st,
		Env:    ts.env,
		SaveProfile: func(c setup.Config, path string) error {
			return profiles.Save(path, tui.ProfileOf(c))
		},
	}
	if queue != nil {
		o.Queue = queue(ts)
	}
	_, err = tea.NewProgram(tui.New(o), tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// tuiStarter builds the workload of a Setup config, kept in the store as it goes
// (ts.begin). Everything slow (loading a model, writing a synthetic one, reading a
// dataset) happens inside the workload, so the screen stays live while it does.
func tuiStarter(dev *telemetryDevice, ts *tuiStore) tui.Starter {
	return func(c setup.Config) (runcore.Workload, string, []runcore.Option, error) {
		opts := []runcore.Option{runcore.WithSampler(dev.sampler, telemetry.DefaultInterval)}
		if c.Kind == setup.Bench {
			w := &micro.Bench{Spec: c.BenchSpec(), Open: benchOpener(""), Build: version, CPUInfo: telemetry.CPUInfo().Model}
			if dev.gpus != nil && dev.gpus.Count() > 0 {
				if g, err := dev.gpus.Read(0); err == nil {
					w.GPUInfo = g.Name
				}
			}
			if rec := ts.begin(c); rec != nil {
				w.Observe = rec.BenchRecord
			}
			return w, dev.note, opts, nil
		}
		var sonnet []byte
		if c.Dataset == "sonnet" {
			var err error
			if sonnet, err = os.ReadFile("sonnet.txt"); err != nil {
				return nil, "", nil, errors.New("the sonnet dataset reads sonnet.txt in the current folder: " + err.Error())
			}
		}
		rec := ts.begin(c)
		w := runcore.Func{Label: "serve-bench", F: func(ctx context.Context, r *runcore.Reporter) (any, error) {
			return tuiServe(ctx, r, c, sonnet, rec)
		}}
		return w, dev.note, opts, nil
	}
}

// tuiStore is the results store as the TUI sees it: History lists it; a run is kept
// as it goes from its start (begin) and finished when the root saves its Done.
type tuiStore struct {
	s   *store.Store
	env []result.KV

	mu      sync.Mutex
	pending *store.Writer // the run going now (the TUI runs one at a time)
}

// begin starts the record of the run c; nil when the store cannot be written (the
// run goes on, and Save keeps it at the end). A run before it that never reached
// Save (it failed without a result) ends as failed.
func (t *tuiStore) begin(c setup.Config) *store.Writer {
	return t.beginProfile(tui.ProfileOf(c).Runs[0])
}

// beginProfile starts the record of a run of profile p, as begin does.
func (t *tuiStore) beginProfile(p workloads.Job) *store.Writer {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(errors.New("the run ended without a result"))
	if t.s == nil {
		return nil
	}
	w, err := t.s.Create(p, t.env)
	if err != nil {
		return nil
	}
	t.pending = w
	return w
}

// end closes the record of a run that will not reach Save (nil error: partial).
func (t *tuiStore) end(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(err)
}

func (t *tuiStore) endLocked(err error) {
	if t.pending != nil {
		t.pending.Close(err)
		t.pending = nil
	}
}

// List implements tui.Store.
func (t *tuiStore) List() ([]tui.RunInfo, error) {
	list, err := t.s.List()
	out := make([]tui.RunInfo, len(list))
	for i, e := range list {
		out[i] = tui.RunInfo{ID: e.ID, Summary: e.Summary}
	}
	return out, err
}

// Load implements tui.Store.
func (t *tuiStore) Load(id string) (result.Document, error) { return t.s.Load(id) }

// Delete implements tui.Store.
func (t *tuiStore) Delete(id string) error { return t.s.Delete(id) }

// Save implements tui.Store: it finishes the record of the run going now, else keeps
// d as a new one.
func (t *tuiStore) Save(d result.Document) (string, error) {
	if d.Env == nil {
		d.Env = t.env
	}
	t.mu.Lock()
	w := t.pending
	t.pending = nil
	t.mu.Unlock()
	if w != nil {
		return w.ID(), w.Finish(d, nil)
	}
	return t.s.Save(d)
}

// tuiServe prepares a serve-bench point (engine or HTTP client, tokenizer, dataset)
// and runs it on r.
func tuiServe(ctx context.Context, r *runcore.Reporter, c setup.Config, sonnet []byte, rec *store.Writer) (any, error) {
	sp := tui.ServeSpec(c)
	d := sp.Dataset
	var client serving.Client
	var tok serving.Tokenizer
	var modelID string
	modelCtx := 0
	r.Progress(0, float64(c.Prompts), "requests", "loading "+c.ModelName())
	if c.URL == "" {
		var e *engine.Engine
		var err error
		switch {
		case c.Model.Path == setup.Builtin:
			e, err = loadModel(ctx, "", engine.Options{})
			modelID = c.ModelName()
		case c.Model.Shape != "":
			e, modelID, err = serveBenchEngine(ctx, c.Model.Shape, c.Model.Type, engine.Options{})
		default:
			e, err = engine.Load(ctx, c.Model.Path, engine.Options{})
			modelID = c.Model.Path
		}
		if err != nil {
			return nil, err
		}
		defer e.Close()
		tok, modelCtx = e.Tok, e.Options().Context
		d.RandomInputLen = min(d.RandomInputLen, modelCtx/2)
		d.RandomOutputLen = min(d.RandomOutputLen, modelCtx/4)
		client = &serving.InProc{Gen: e, IgnoreEOS: d.Name == "random"}
		sp.IgnoreEOS = d.Name == "random"
	} else {
		hc := &http.Client{Transport: serving.NewTransport(c.Concurrency)}
		var err error
		if modelID, err = serveBenchFirstModel(ctx, hc, sp.BaseURL, map[string]string{}); err != nil {
			return nil, err
		}
		tokPath := ""
		if c.Model.Path != setup.Builtin && c.Model.Shape == "" {
			tokPath = c.Model.Path
		}
		if tok, _, err = serveBenchTokenizer(tokPath); err != nil {
			return nil, err
		}
		client = &serving.HTTP{Backend: sp.Backend, URL: sp.BaseURL + sp.Endpoint, Model: modelID, Tok: tok, HC: hc, IgnoreEOS: d.Name == "random"}
		sp.IgnoreEOS = d.Name == "random"
	}
	sp.Model = modelID
	sp.Dataset = d
	ds, err := serving.LoadDataset(d, sonnet, tok, modelCtx)
	if err != nil {
		return nil, err
	}
	r.Logf("%s (%d prompts, %d skipped)", ds.Note, len(ds.Requests), ds.Skipped)
	b := &serving.Bench{Spec: sp, Dataset: ds, Client: client, ModelID: modelID, TokenizerID: modelID}
	if rec != nil {
		rec.Point(0, &serving.Result{Spec: sp, ModelID: modelID, TokenizerID: modelID, Skipped: ds.Skipped})
		b.Client = recordingClient{Client: client, w: rec, key: 0}
	}
	return b.Run(ctx, r)
}
