// Package jobs is what a run is, the one place every front end calls: the CLI
// commands, the TUI and `llmbench run PROFILE` hand it a workloads.Job and it
// resolves the model, builds the client for the backend, picks the tokenizer, loads
// the dataset, checks the server is ready, runs every point of the sweep (power
// limits × concurrency × rate), attaches telemetry, keeps the run in the results
// store and writes the exports. A job runs as one run.Workload, so the TUI and the
// headless front end (Headless) see the same events and get the same result.
package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"llmbench/engine"
	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/micro"
	"llmbench/workloads/report"
	"llmbench/workloads/result"
	"llmbench/workloads/run"
	"llmbench/workloads/serving"
	"llmbench/workloads/store"
)

// DefaultSettle is the longest wait for the power draw to settle after a limit is set.
const DefaultSettle = 15 * time.Second

// DefaultReadyTimeout is how long a serving job waits for a server to answer its
// first request (vLLM's --ready-check-timeout-sec default).
const DefaultReadyTimeout = 600 * time.Second

// Options are what a job runs with besides its spec: where its readings come from,
// where it is kept, what it exports, and the settings of a front end that are not
// part of the experiment (HTTP header values, where vLLM-style JSON goes).
type Options struct {
	// Device gives the telemetry and power limits (required).
	Device *Device
	// Store keeps the run; nil: it is not kept.
	Store *store.Store
	// Exports are files the finished run is written to (the extension picks the format).
	Exports []string
	// Build is llmbench's version, recorded with the run.
	Build string
	// CacheDir holds synthetic models ("" = the user cache dir).
	CacheDir string
	// Settle bounds the wait for the power draw after a limit is set (0 = DefaultSettle).
	Settle time.Duration
	// Headless publishes the lines vLLM prints on stdout as Console outputs (a
	// terminal front end prints them); otherwise they go to the run's log.
	Headless bool
	Serve    ServeOptions
	Bench    BenchOptions
}

// ServeOptions are a serving job's settings outside its spec.
type ServeOptions struct {
	// Headers go with every HTTP request; their values are never saved.
	Headers map[string]string
	// ReadyTimeout bounds the wait for an HTTP server (0 = DefaultReadyTimeout);
	// NoReadyCheck skips it.
	ReadyTimeout time.Duration
	NoReadyCheck bool
	// SaveJSON writes each point's vLLM-style result JSON (--save-result).
	SaveJSON *SaveJSON
}

// SaveJSON is serve-bench's --save-result and friends.
type SaveJSON struct {
	Detailed, Append bool
	Dir, File        string
}

// BenchOptions are a bench job's settings outside its spec.
type BenchOptions struct {
	// CeilingBytes, when > 0, measures the read bandwidth with a buffer of that size
	// (CeilingProbes probes, the median counts) before the tests.
	CeilingBytes  int64
	CeilingProbes int
	// Steps, when set, receives llama-bench's --progress lines.
	Steps func(line string)
	// Verbose logs each test's engine details (llama-bench's -v).
	Verbose bool
}

// Console is a line a headless front end prints on stdout (vLLM prints it there).
type Console string

// Check says in one line why job cannot run with o (nil: it can), before anything
// runs: the models, the power limits, the engine settings, the exports.
func Check(job workloads.Job, o Options) error {
	if o.Device == nil {
		return errors.New("jobs: no device")
	}
	if err := o.Device.CheckLimits(job.PowerLimitW); err != nil {
		return err
	}
	for _, p := range o.Exports {
		if _, err := report.ExportFunc(p); err != nil {
			return fmt.Errorf("--export: %w", err)
		}
		if fi, err := os.Stat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			return fmt.Errorf("--export %s: folder %s does not exist", p, filepath.Dir(p))
		}
	}
	switch {
	case job.Bench != nil:
		for _, m := range job.Bench.Models {
			if err := CheckModel(m); err != nil {
				return err
			}
		}
		return micro.Validate(*job.Bench)
	case job.Kernels != nil:
		if len(job.PowerLimitW) > 0 || job.Sweep != nil {
			return errors.New("--power-limit and sweeps are for bench and serve-bench runs, not kernels")
		}
		return kernelbench.Validate(*job.Kernels)
	case job.Batch != nil:
		return checkBatch(job)
	case job.Throughput != nil:
		return checkThroughput(*job.Throughput)
	case job.Serve != nil:
		if _, err := EngineOptions(job.Serve.Engine); err != nil {
			return err
		}
		if err := (engine.Options{Threads: job.Serve.Threads}).Validate(); err != nil {
			return fmt.Errorf("-t: %w", err)
		}
		if err := serving.CheckEnergyDevice(job.Serve); err != nil {
			return fmt.Errorf("--energy-device: %w", err)
		}
		if err := job.Serve.ValidateRequestOptions(); err != nil {
			return err
		}
		if err := job.Serve.CheckNonStreaming(); err != nil {
			return err
		}
		if job.Serve.Backend == "inproc" {
			m, err := ModelRef(job.Serve.Model, job.Serve.SyntheticType)
			if err != nil {
				return err
			}
			if err := CheckModel(m); err != nil {
				return err
			}
			_, _, err = DraftRef(job.Serve.Engine, job.Serve.SyntheticType)
			return err
		}
		if job.Serve.Engine.Draft != "" {
			return errors.New("--model-draft is for --backend inproc (give an external server its draft model itself)")
		}
		return nil
	}
	return errors.New("jobs: the job has no bench, serve, kernels, batch or throughput section")
}

// Workload is job as one run.Workload: Run executes every point, keeps the run in
// o.Store as it goes, writes o.Exports, and returns a *result.Stored.
func Workload(job workloads.Job, o Options) run.Workload {
	return run.Func{Label: job.Kind(), F: func(ctx context.Context, rep *run.Reporter) (any, error) {
		x := &execution{job: job, o: o, rep: rep, started: time.Now(), env: o.Device.Env(o.Build)}
		if x.o.Settle <= 0 {
			x.o.Settle = DefaultSettle
		}
		x.logf("telemetry: %s", o.Device.Note)
		var doc result.Document
		var err error
		switch {
		case job.Bench != nil:
			doc, err = x.bench(ctx)
		case job.Kernels != nil:
			doc, err = x.kernels(ctx)
		case job.Batch != nil:
			doc, err = x.batch(ctx)
		case job.Throughput != nil:
			doc, err = x.throughput(ctx)
		default:
			doc, err = x.serve(ctx)
		}
		return x.finish(doc, err)
	}}
}

// execution is one job running.
type execution struct {
	job     workloads.Job
	o       Options
	rep     *run.Reporter
	started time.Time
	env     []result.KV   // the machine, build and telemetry, recorded with the run
	rec     *store.Writer // nil until the run is kept (or when it is not)
}

// logf writes a line to the run's log.
func (x *execution) logf(format string, a ...any) { x.rep.Logf(format, a...) }

// say is a line vLLM prints on stdout: a Console output headless, a log line in the TUI.
func (x *execution) say(line string) {
	if x.o.Headless {
		x.rep.Output(Console(line))
		return
	}
	x.rep.Logf("%s", line)
}

// keep starts the run's record in the store (once; a store that cannot be written
// costs a warning, not the run).
func (x *execution) keep() *store.Writer {
	if x.rec != nil || x.o.Store == nil {
		return x.rec
	}
	w, err := x.o.Store.Create(kept(x.job), x.env)
	if err != nil {
		x.logf("warning: the run is not kept in the results store: %v", err)
		x.o.Store = nil
		return nil
	}
	x.rec = w
	return w
}

// kept is the job a stored run keeps: its dataset path absolute, so that store:ID
// runs it again from any folder.
func kept(job workloads.Job) workloads.Job {
	if t := job.Throughput; t != nil && t.DatasetPath != "" && !filepath.IsAbs(t.DatasetPath) {
		tp := *t
		if abs, err := filepath.Abs(tp.DatasetPath); err == nil {
			tp.DatasetPath = abs
			job.Throughput = &tp
		}
	}
	if job.Serve != nil && job.Serve.Dataset.Path != "" && !filepath.IsAbs(job.Serve.Dataset.Path) {
		sp := *job.Serve
		if abs, err := filepath.Abs(sp.Dataset.Path); err == nil {
			sp.Dataset.Path = abs
			job.Serve = &sp
		}
	}
	return job
}

// finish ends the record with the final document and writes the exports. A run
// that measured nothing is neither kept nor exported. It returns the stored result
// and runErr, else the first export error.
func (x *execution) finish(doc result.Document, runErr error) (*result.Stored, error) {
	measured := doc.Bench != nil && len(doc.Bench.Records) > 0 || len(doc.Serving) > 0 || doc.Kernels != nil && len(doc.Kernels.Sections) > 0 ||
		doc.Batch != nil && len(doc.Batch.Points) > 0 ||
		doc.Throughput != nil && len(doc.Throughput.Rows) > 0
	doc.Title, doc.Started, doc.Env = x.job.Title(), x.started, x.env
	stored := &result.Stored{Doc: doc}
	canceled := runErr != nil && errors.Is(runErr, context.Canceled)
	if canceled {
		stored.Doc.Partial = true
	}
	if !measured && x.rec == nil {
		return stored, runErr
	}
	if x.rec != nil {
		recErr := runErr
		if canceled {
			recErr = nil
		}
		if err := x.rec.Finish(stored.Doc, recErr); err != nil {
			x.logf("warning: results store: %v", err)
		} else {
			stored.ID = x.rec.ID()
			if x.o.Headless {
				x.logf("saved run %s in %s", x.rec.ID(), x.o.Store.Dir())
			}
		}
	}
	if !measured {
		return stored, runErr
	}
	var first error
	for _, p := range x.o.Exports {
		if err := report.Export(p, stored.Doc); err != nil {
			first = cmp.Or(first, err)
			continue
		}
		x.logf("exported %s", p)
	}
	return stored, cmp.Or(runErr, first)
}
