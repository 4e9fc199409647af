package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"llmbench/workloads"
	"llmbench/workloads/kernelbench"
	"llmbench/workloads/metrics"
	"llmbench/workloads/micro"
	"llmbench/workloads/result"
	"llmbench/workloads/serving"

	"go.yaml.in/yaml/v3"
)

// StoreSchema is the version of the results store's files this build writes.
const StoreSchema = 1

// Status is where a stored run stands.
type Status string

// The states of a stored run. A run left Running by a process that is gone (or that
// stopped beating) lists as Partial.
const (
	Running Status = "running"
	Done    Status = "done"
	Partial Status = "partial"
	Failed  Status = "failed"
)

// heartbeatEvery is how often a Writer proves its process alive (and fsyncs the
// samples); staleAfter is when a silent running record counts as dead.
const (
	heartbeatEvery = 5 * time.Second
	staleAfter     = 30 * time.Second
)

// File names inside a run's folder.
const (
	metaFile    = "meta.json"     // what ran, where, how it ended (atomic rewrites)
	samplesFile = "samples.jsonl" // raw samples, appended as they arrive
	resultFile  = "result.json"   // the exact final Document (atomic, at the end)
)

// DataDir returns the store's folder: flag when given, else $LLMBENCH_HOME, else
// $XDG_DATA_HOME/llmbench, else ~/.local/share/llmbench.
func DataDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := os.Getenv("LLMBENCH_HOME"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "llmbench"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("results store: no home folder (%v); give --data-dir or LLMBENCH_HOME", err)
	}
	return filepath.Join(home, ".local", "share", "llmbench"), nil
}

// Store is the history of runs under one data folder.
type Store struct {
	dir string // …/runs
}

// OpenStore opens (creating when needed) the store under dataDir.
func OpenStore(dataDir string) (*Store, error) {
	dir := filepath.Join(dataDir, "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the folder that holds one sub-folder per run.
func (s *Store) Dir() string { return s.dir }

// Entry is one stored run as the history lists it: its id, its summary
// (result.Summarize of its Document) and how it ended.
type Entry struct {
	ID string
	result.Summary
	Status Status
	Error  string // why a failed run failed
}

// meta is a run's meta.json.
type meta struct {
	Schema   int        `json:"schema"`
	ID       string     `json:"id"`
	Status   Status     `json:"status"`
	Error    string     `json:"error,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	PID      int        `json:"pid"`
	Host     string     `json:"host"`
	// Summary is what the history lists (Title, Started, Kind, Model, Headline, …).
	Summary result.Summary `json:"summary"`
	// Profile is the run as a profile file (YAML), so it can be run again.
	Profile string      `json:"profile"`
	Env     []result.KV `json:"env"`
}

func (m *meta) entry() Entry {
	e := Entry{ID: m.ID, Summary: m.Summary, Status: m.Status, Error: m.Error}
	e.Partial = m.Status != Done
	return e
}

// sample is one line of samples.jsonl.
type sample struct {
	Kind string `json:"kind"` // "bench", "point", "request", "kernels" or "batch"
	Key  int    `json:"key"`  // bench: test number; point/request: sweep point; kernels: section
	// bench: the test's record so far (the last line of a key wins).
	Bench *micro.Record `json:"bench,omitempty"`
	// point: the serving point's spec and what it measured.
	Point *pointHeader `json:"point,omitempty"`
	// request: one finished request.
	Request *metrics.Record `json:"request,omitempty"`
	// kernels: one finished section of a kernel benchmark.
	Section *kernelbench.Section `json:"section,omitempty"`
	// batch: the run's header (model, backend, label) and point Key's runs so far
	// (the last line of a key wins).
	Batch *micro.BatchResult `json:"batch,omitempty"`
}

type pointHeader struct {
	Result  *serving.Result `json:"result"` // Spec, ModelID, TokenizerID, Notes, PowerLimitW
	Started time.Time       `json:"started"`
}

// Writer records one run while it goes: created "running", samples appended as
// they arrive, finished "done" or "partial". Its methods are safe for concurrent use
// and never wait for the disk: samples are queued and a writer goroutine appends
// them (and fsyncs them every heartbeat), so nothing of the store sits on a
// request's path.
type Writer struct {
	dir      string
	mu       sync.Mutex
	meta     meta
	f        *os.File
	queue    []sample      // samples not yet written, in order
	wake     chan struct{} // a sample was queued (capacity 1)
	syncs    chan chan error
	err      error // the first write, sync or close error; later samples are dropped
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// keptProfile is the profile file (YAML, the "runs:" form that profiles reads) a
// record keeps of its job, so the run can be replayed.
type keptProfile struct {
	Schema int             `yaml:"schema"`
	Name   string          `yaml:"name,omitempty"`
	Runs   []workloads.Job `yaml:"runs"`
}

// ProfileSchema is the profile format version a record's kept profile is written in
// (profiles.SchemaVersion reads it).
const ProfileSchema = 1

// marshalJob returns job as a one-run profile file.
func marshalJob(job workloads.Job) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(keptProfile{Schema: ProfileSchema, Name: job.Name, Runs: []workloads.Job{job}}); err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	return b.Bytes(), nil
}

// Create starts the record of job on this machine: env describes it
// (result.Environment). The record lists as running until Finish.
func (s *Store) Create(job workloads.Job, env []result.KV) (*Writer, error) {
	yml, err := marshalJob(job)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	now := time.Now()
	r := job
	m := meta{Schema: StoreSchema, Status: Running, PID: os.Getpid(), Host: host, Profile: string(yml), Env: env,
		Summary: result.Summary{Title: r.Title(), Started: now, Kind: r.Kind(), Model: r.ModelNames(), Headline: "running"}}
	var dir string
	for i := 0; ; i++ {
		m.ID = now.UTC().Format("20060102-150405") + "-" + strconv.Itoa(os.Getpid())
		if i > 0 {
			m.ID += "-" + strconv.Itoa(i)
		}
		dir = filepath.Join(s.dir, m.ID)
		if err = os.Mkdir(dir, 0o755); err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return nil, fmt.Errorf("results store: %w", err)
		}
	}
	w := &Writer{dir: dir, meta: m, wake: make(chan struct{}, 1), syncs: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{})}
	if err := w.writeMeta(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if w.f, err = os.OpenFile(filepath.Join(dir, samplesFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("results store: %w", err)
	}
	go w.loop()
	return w, nil
}

// ID returns the run's id in the store.
func (w *Writer) ID() string { return w.meta.ID }

// Err returns the first error writing samples hit (the run goes on without them).
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) writeMeta() error {
	b, err := json.MarshalIndent(&w.meta, "", "  ")
	if err != nil {
		return fmt.Errorf("results store: %w", err)
	}
	return WriteFileAtomic(filepath.Join(w.dir, metaFile), append(b, '\n'))
}

// loop is the writer goroutine: it appends queued samples as they come and, every
// heartbeat, fsyncs them and touches the file so a reader can tell a live run from
// one whose process died. On stop it writes what is left, syncs and closes the file.
func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-w.wake:
			w.flush()
		case <-t.C:
			w.flush()
			w.fail(w.f.Sync())
			now := time.Now()
			os.Chtimes(w.f.Name(), now, now)
		case reply := <-w.syncs:
			w.flush()
			w.fail(w.f.Sync())
			reply <- w.Err()
		case <-w.stop:
			w.flush()
			w.fail(w.f.Sync())
			w.fail(w.f.Close())
			return
		}
	}
}

// fail keeps err as the record's first error (nil: nothing).
func (w *Writer) fail(err error) {
	if err == nil {
		return
	}
	w.mu.Lock()
	if w.err == nil {
		w.err = fmt.Errorf("results store: %w", err)
	}
	w.mu.Unlock()
}

// flush appends the queued samples, each line with a single write, so a crash
// leaves at most a torn last line (which readers skip) and a SIGKILL loses nothing
// the kernel already has. Only the writer goroutine calls it.
func (w *Writer) flush() {
	w.mu.Lock()
	q := w.queue
	w.queue = nil
	failed := w.err != nil
	w.mu.Unlock()
	if failed {
		return
	}
	var buf []byte
	for i := range q {
		b, err := json.Marshal(&q[i])
		if err != nil {
			w.fail(err)
			return
		}
		buf = append(append(buf, b...), '\n')
		if len(buf) >= 1<<16 || i == len(q)-1 {
			if _, err := w.f.Write(buf); err != nil {
				w.fail(err)
				return
			}
			buf = buf[:0]
		}
	}
}

// Sync waits until every sample queued so far is written and fsynced, and returns
// the record's first error. A reader of the store then sees them all.
func (w *Writer) Sync() error {
	reply := make(chan error, 1)
	select {
	case w.syncs <- reply:
		return <-reply
	case <-w.done:
		return w.Err()
	}
}

// append queues one sample for the writer goroutine.
func (w *Writer) append(s sample) {
	w.mu.Lock()
	if w.err == nil && w.meta.Finished == nil {
		w.queue = append(w.queue, s)
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// BenchRecord records a bench test's record so far; call it after every timed
// repetition with the same key (a test's number in the run) and the last one counts.
func (w *Writer) BenchRecord(key int, rec micro.Record) {
	w.append(sample{Kind: "bench", Key: key, Bench: &rec})
}

// Point records the start of serving point key: its result so far (spec, model and
// tokenizer ids, notes, power limit), before any of its requests.
func (w *Writer) Point(key int, head *serving.Result) {
	h := *head
	h.Records, h.Summary = nil, metrics.Serving{}
	w.append(sample{Kind: "point", Key: key, Point: &pointHeader{Result: &h, Started: time.Now()}})
}

// Request records one finished request of serving point key.
func (w *Writer) Request(key int, rec metrics.Record) {
	w.append(sample{Kind: "request", Key: key, Request: &rec})
}

// BatchPoint records the runs so far of point key (a batch size) of a batch run
// whose header (model, backend, label) is head; call it after every timed run with
// the same key and the last one counts.
func (w *Writer) BatchPoint(key int, head micro.BatchResult, p micro.BatchPoint) {
	p.Runs = slices.Clone(p.Runs) // the run goes on appending to its own
	head.Points = []micro.BatchPoint{p}
	w.append(sample{Kind: "batch", Key: key, Batch: &head})
}

// KernelSection records section key of a kernel benchmark once it is complete.
func (w *Writer) KernelSection(key int, sec kernelbench.Section) {
	w.append(sample{Kind: "kernels", Key: key, Section: &sec})
}

// Finish ends the record: doc (the exact final result) is written whole, and the
// status becomes done, or partial when doc.Partial, or failed when runErr is set.
// It returns the first error writing the record met.
func (w *Writer) Finish(doc result.Document, runErr error) error {
	if err := w.stopSamples(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	err := w.err
	if doc.Started.IsZero() {
		doc.Started = w.meta.Summary.Started
	}
	if doc.Title == "" {
		doc.Title = w.meta.Summary.Title
	}
	if doc.Env == nil {
		doc.Env = w.meta.Env
	}
	if b, merr := marshalDoc(doc); merr != nil {
		err = errors.Join(err, merr)
	} else if werr := WriteFileAtomic(filepath.Join(w.dir, resultFile), b); werr != nil {
		err = errors.Join(err, werr)
	}
	now := time.Now()
	w.meta.Finished = &now
	switch {
	case runErr != nil:
		w.meta.Status, w.meta.Error = Failed, oneLine(runErr.Error())
	case doc.Partial:
		w.meta.Status = Partial
	default:
		w.meta.Status = Done
	}
	w.fillSummary(doc)
	if merr := w.writeMeta(); merr != nil {
		err = errors.Join(err, merr)
	}
	return err
}

// stopSamples ends the writer goroutine (every queued sample written, the file
// synced and closed), returning with w.mu held; a record already ended is an error
// (and w.mu is not held).
func (w *Writer) stopSamples() error {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	if w.meta.Finished != nil {
		w.mu.Unlock()
		return fmt.Errorf("results store: run %s already ended", w.meta.ID)
	}
	return nil
}

// Close ends a record that has no final result (its run failed or was abandoned):
// the status becomes failed with runErr, else partial, and Load rebuilds the run from
// its samples.
func (w *Writer) Close(runErr error) error {
	if err := w.stopSamples(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	now := time.Now()
	w.meta.Finished = &now
	w.meta.Status = Partial
	if runErr != nil {
		w.meta.Status, w.meta.Error = Failed, oneLine(runErr.Error())
	}
	return errors.Join(w.err, w.writeMeta())
}

// fillSummary lists the run by its result (summarize).
func (w *Writer) fillSummary(doc result.Document) { w.meta.Summary = w.meta.summarize(doc) }

// summarize lists a run by doc, what it measured: what doc cannot say (the kind and
// model of a run that measured nothing) stays as the job said, and a failed run's
// headline says that it failed and why.
func (m *meta) summarize(doc result.Document) result.Summary {
	sum := result.Summarize(doc)
	sum.Partial = m.Status != Done
	if sum.Model == "" {
		sum.Model = m.Summary.Model
	}
	if sum.Kind == "?" {
		sum.Kind = m.Summary.Kind
	}
	measured := len(doc.Serving) > 0 || doc.Bench != nil && len(doc.Bench.Records) > 0 || doc.Batch != nil && len(doc.Batch.Points) > 0
	switch {
	case m.Status == Failed && measured:
		sum.Failed, sum.Headline = true, "failed: "+m.Error+" · "+sum.Headline
	case m.Status == Failed:
		sum.Failed, sum.Headline = true, "failed: "+m.Error
	case !measured && sum.Partial:
		sum.Headline = "stopped before any result"
	}
	return sum
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// List returns the stored runs, newest first. A record that cannot be read is
// skipped; a running record whose process is gone lists as partial.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		m, err := s.readMeta(de.Name())
		if err != nil {
			continue
		}
		if m.Status != Done && !m.hasResult(s.dir) {
			// Died mid-run: summarise what its samples hold.
			if doc, err := s.Load(m.ID); err == nil {
				m.Summary = m.summarize(doc)
			}
		}
		out = append(out, m.entry())
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// hasResult reports whether the run's final document was written.
func (m *meta) hasResult(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, m.ID, resultFile))
	return err == nil
}

// readMeta reads a run's meta.json, turning a dead running record into a partial one.
func (s *Store) readMeta(id string) (*meta, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(s.dir, id, metaFile))
	if err != nil {
		return nil, fmt.Errorf("results store: run %s: %w", id, err)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("results store: run %s: meta.json: %w", id, err)
	}
	if m.Schema > StoreSchema {
		return nil, fmt.Errorf("results store: run %s: schema %d is newer than this build reads (%d)", id, m.Schema, StoreSchema)
	}
	if m.Status == Running && !s.alive(&m) {
		m.Status = Partial
	}
	return &m, nil
}

// alive reports whether a running record's writer still runs: its process exists
// (when on this host) and it beat within staleAfter.
func (s *Store) alive(m *meta) bool {
	last := m.Summary.Started
	if fi, err := os.Stat(filepath.Join(s.dir, m.ID, samplesFile)); err == nil && fi.ModTime().After(last) {
		last = fi.ModTime()
	}
	if time.Since(last) > staleAfter {
		return false
	}
	if host, _ := os.Hostname(); host == m.Host {
		return pidAlive(m.PID)
	}
	return true
}

func checkID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("results store: %q is not a run id", id)
	}
	return nil
}

// Delete removes a stored run.
func (s *Store) Delete(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, id)
	if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
		return fmt.Errorf("results store: no run %s", id)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("results store: %w", err)
	}
	return nil
}

// ProfileYAML returns the stored run as a profile file (YAML), to run it again.
func (s *Store) ProfileYAML(id string) ([]byte, error) {
	m, err := s.readMeta(id)
	if err != nil {
		return nil, err
	}
	return []byte(m.Profile), nil
}

// Load returns a stored run as the exporters see it: the exact final Document when
// the run finished, else one rebuilt from its samples (marked partial).
func (s *Store) Load(id string) (result.Document, error) {
	m, err := s.readMeta(id)
	if err != nil {
		return result.Document{}, err
	}
	dir := filepath.Join(s.dir, id)
	if b, err := os.ReadFile(filepath.Join(dir, resultFile)); err == nil {
		doc, err := unmarshalDoc(b)
		if err != nil {
			return result.Document{}, fmt.Errorf("results store: run %s: %w", id, err)
		}
		doc.Partial = doc.Partial || m.Status != Done
		return doc, nil
	}
	doc := result.Document{Title: m.Summary.Title, Started: m.Summary.Started, Env: m.Env, Partial: true}
	var kept keptProfile
	if err := yaml.Unmarshal([]byte(m.Profile), &kept); err != nil || len(kept.Runs) != 1 {
		return result.Document{}, fmt.Errorf("results store: run %s: its profile cannot be read (%v)", id, err)
	}
	samples, err := readSamples(filepath.Join(dir, samplesFile))
	if err != nil {
		return result.Document{}, fmt.Errorf("results store: run %s: %w", id, err)
	}
	rebuild(&doc, kept.Runs[0], samples)
	return doc, nil
}

// readSamples reads samples.jsonl; a torn or unreadable line (a crash mid-write) is
// skipped.
func readSamples(path string) ([]sample, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		var s sample
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			out = append(out, s)
		}
	}
	return out, nil // a scanner error past the last good line is a torn tail
}

// rebuild fills doc from the samples of an unfinished run.
func rebuild(doc *result.Document, r workloads.Job, samples []sample) {
	if r.Kernels != nil {
		rep := &kernelbench.Report{Spec: r.Kernels.WithDefaults(), Partial: true}
		for _, s := range samples {
			if s.Kind == "kernels" && s.Section != nil {
				rep.Sections = append(rep.Sections, *s.Section)
			}
		}
		doc.Kernels = rep
		return
	}
	if r.Batch != nil {
		res := &micro.BatchResult{Spec: r.Batch.WithDefaults()}
		for _, s := range samples {
			if s.Kind != "batch" || s.Batch == nil || len(s.Batch.Points) != 1 || s.Key < 0 {
				continue
			}
			pts := res.Points
			*res = *s.Batch // the run's header: model, backend, label
			res.Points = pts
			for len(res.Points) <= s.Key {
				res.Points = append(res.Points, micro.BatchPoint{})
			}
			res.Points[s.Key] = s.Batch.Points[0]
		}
		res.Partial = true
		for i := range res.Points {
			if len(res.Points[i].Runs) < res.Spec.Runs {
				res.Points[i].Partial = true
			}
		}
		doc.Batch = res
		return
	}
	if r.Bench != nil {
		res := &micro.Result{Spec: r.Bench.WithDefaults(), Partial: true}
		byKey := map[int]micro.Record{}
		for _, s := range samples {
			if s.Kind == "bench" && s.Bench != nil {
				byKey[s.Key] = *s.Bench
			}
		}
		keys := make([]int, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			rec := byKey[k]
			if len(rec.SamplesNs) < res.Spec.Reps {
				rec.Partial = true
			}
			res.Records = append(res.Records, rec)
		}
		doc.Bench = res
		return
	}
	points := map[int]*serving.Result{}
	starts := map[int]time.Time{}
	var order []int
	for _, s := range samples {
		switch {
		case s.Kind == "point" && s.Point != nil && s.Point.Result != nil:
			if _, ok := points[s.Key]; !ok {
				order = append(order, s.Key)
			}
			points[s.Key], starts[s.Key] = s.Point.Result, s.Point.Started
		case s.Kind == "request" && s.Request != nil:
			if p := points[s.Key]; p != nil {
				p.Records = append(p.Records, *s.Request)
			}
		}
	}
	for _, k := range order {
		p := points[k]
		sort.SliceStable(p.Records, func(i, j int) bool { return p.Records[i].Index < p.Records[j].Index })
		var first, last time.Duration = -1, 0
		for _, rec := range p.Records {
			if first < 0 || rec.Scheduled < first {
				first = rec.Scheduled
			}
			last = max(last, rec.Start+rec.Latency)
		}
		if len(p.Records) > 0 {
			p.Duration = last - first
		}
		if p.Started.IsZero() {
			p.Started = starts[k]
		}
		p.Partial = true
		if p.Requests == 0 { // a point saved before Result.Requests existed
			p.Requests = p.Spec.Dataset.NumPrompts
		}
		p.Interrupted = max(0, p.Requests-len(p.Records))
		p.Summary = serving.Summarize(p)
		doc.Serving = append(doc.Serving, p)
	}
}

// storedDoc is result.json: a Document with the serving summaries left out (they
// are recomputed from the raw records on load, so they always agree with them).
type storedDoc struct {
	Schema  int                 `json:"schema"`
	Title   string              `json:"title"`
	Started time.Time           `json:"started"`
	Env     []result.KV         `json:"env"`
	Partial bool                `json:"partial"`
	Bench   *micro.Result       `json:"bench,omitempty"`
	Serving []storedServing     `json:"serving,omitempty"`
	Kernels *kernelbench.Report `json:"kernels,omitempty"`
	Batch   *micro.BatchResult  `json:"batch,omitempty"`
	// Throughput is a throughput run's rows (its points are in Serving).
	Throughput *result.Throughput `json:"throughput,omitempty"`
}

// storedServing hides serving.Result's Summary: the outer field dominates the
// embedded one and, nil, is omitted.
type storedServing struct {
	*serving.Result
	Summary *struct{} `json:"Summary,omitempty"`
}

func marshalDoc(d result.Document) ([]byte, error) {
	sd := storedDoc{Schema: StoreSchema, Title: d.Title, Started: d.Started, Env: d.Env, Partial: d.Partial, Bench: d.Bench, Kernels: d.Kernels, Batch: d.Batch, Throughput: d.Throughput}
	for _, r := range d.Serving {
		sd.Serving = append(sd.Serving, storedServing{Result: r})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(sd); err != nil {
		return nil, fmt.Errorf("results store: %w", err)
	}
	return b.Bytes(), nil
}

func unmarshalDoc(b []byte) (result.Document, error) {
	var sd storedDoc
	if err := json.Unmarshal(b, &sd); err != nil {
		return result.Document{}, fmt.Errorf("result.json: %w", err)
	}
	if sd.Schema > StoreSchema {
		return result.Document{}, fmt.Errorf("result.json: schema %d is newer than this build reads (%d)", sd.Schema, StoreSchema)
	}
	d := result.Document{Title: sd.Title, Started: sd.Started, Env: sd.Env, Partial: sd.Partial, Bench: sd.Bench, Kernels: sd.Kernels, Batch: sd.Batch, Throughput: sd.Throughput}
	for _, s := range sd.Serving {
		if s.Result == nil {
			continue
		}
		s.Result.Summary = serving.Summarize(s.Result)
		d.Serving = append(d.Serving, s.Result)
	}
	return d, nil
}

// Save keeps a run that finished elsewhere (the TUI saves each run when its Done
// arrives) and returns its id: its profile is rebuilt from the document's specs.
func (s *Store) Save(d result.Document) (string, error) {
	job, err := jobOf(d)
	if err != nil {
		return "", err
	}
	env := d.Env
	if env == nil {
		env = result.Environment()
	}
	w, err := s.Create(job, env)
	if err != nil {
		return "", err
	}
	if !d.Started.IsZero() {
		w.meta.Summary.Started = d.Started
	}
	return w.ID(), w.Finish(d, nil)
}

// jobOf rebuilds the job of a run that finished elsewhere from its document's specs.
func jobOf(d result.Document) (workloads.Job, error) {
	switch {
	case d.Bench != nil:
		spec := d.Bench.Spec
		return workloads.Job{Name: d.Title, Bench: &spec}, nil
	case d.Kernels != nil:
		spec := d.Kernels.Spec
		return workloads.Job{Name: d.Title, Kernels: &spec}, nil
	case d.Batch != nil:
		spec := d.Batch.Spec
		return workloads.Job{Name: d.Title, Batch: &spec}, nil
	case d.Throughput != nil:
		spec := d.Throughput.Spec
		return workloads.Job{Name: d.Title, Throughput: &spec}, nil
	case len(d.Serving) > 0:
		var concs []int
		var rates []workloads.Rate
		for _, r := range d.Serving {
			if !slices.Contains(concs, r.Spec.MaxConcurrency) {
				concs = append(concs, r.Spec.MaxConcurrency)
			}
			if !slices.Contains(rates, r.Spec.RequestRate) {
				rates = append(rates, r.Spec.RequestRate)
			}
		}
		spec := d.Serving[0].Spec
		j := workloads.Job{Name: d.Title, Serve: &spec}
		if len(concs) > 1 || len(rates) > 1 {
			j.Sweep = &workloads.Sweep{MaxConcurrency: concs, RequestRate: rates}
		}
		return j, nil
	}
	return workloads.Job{}, errors.New("results store: the run has no result to save")
}
