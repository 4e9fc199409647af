package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// StateDir returns the directory llmbench keeps state in: $LLMBENCH_STATE_DIR, else
// $XDG_STATE_HOME/llmbench, else ~/.local/state/llmbench on Linux and the user cache
// directory's llmbench elsewhere.
func StateDir() (string, error) {
	if d := os.Getenv("LLMBENCH_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "llmbench"), nil
	}
	if runtime.GOOS == "linux" {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, ".local", "state", "llmbench"), nil
		}
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("state dir: %w", err)
	}
	return filepath.Join(d, "llmbench"), nil
}

// PowerStateFile is the name, in the state dir, of the file that held the original
// power limits of every GPU while llmbench had changed them; each GPU now has its
// own state file and lock file beside it (power-limits-KIND-UUID.json and .lock).
// RestoreSaved still reads this one, left by an older llmbench.
const PowerStateFile = "power-limits.json"

// FakeStateFile is the name, in the state dir, of the Fake device's limits.
const FakeStateFile = "fake-gpu.json"

// ErrLocked is returned (wrapped, as a *LockedError) when another process holds a
// GPU's power lock: it is changing that GPU's limits.
var ErrLocked = errors.New("power limit locked by another process")

// LockedError says which process holds a GPU's power lock.
type LockedError struct {
	Path string // the lock file
	PID  int    // the holder, 0 when the lock file did not say
}

func (e *LockedError) Error() string {
	who := "another llmbench process"
	if e.PID > 0 {
		who = fmt.Sprintf("llmbench pid %d", e.PID)
	}
	return fmt.Sprintf("%s is changing it (lock %s)", who, e.Path)
}

// Is makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// savedLimits is the content of a power state file.
type savedLimits struct {
	PID    int          `json:"pid"`
	Kind   string       `json:"kind"`
	Limits []savedLimit `json:"limits"`
}

type savedLimit struct {
	Index  int     `json:"index"`
	UUID   string  `json:"uuid,omitempty"`
	LimitW float64 `json:"limit_w"`
}

// PowerGuard changes GPU power limits and guarantees they go back. Before it first
// changes a GPU it takes that GPU's exclusive lock (flock on a lock file in the state
// dir, held until Restore; the kernel drops it if the process dies), so a second
// process that wants to change the same GPU is refused instead of saving the first
// one's limit as its "original"; then it writes the GPU's original limit to the
// GPU's state file (so the next start can restore it after a crash). Restore sets
// back only what this guard saved, removes its state files and releases the locks.
// Its methods are safe for concurrent use (a signal handler may call Restore).
type PowerGuard struct {
	mu    sync.Mutex
	gpus  GPUs
	file  string // PowerStateFile's path: the per-GPU files are named after it
	held  map[int]*guardedGPU
	order []int // GPUs in the order they were first changed
}

// guardedGPU is a GPU the guard holds: its lock, its state file and the limit to
// restore.
type guardedGPU struct {
	saved savedLimit
	lock  *fileLock
	state string
}

// NewPowerGuard returns a guard of gpus whose state and lock files live beside file
// (the state dir's PowerStateFile).
func NewPowerGuard(gpus GPUs, file string) *PowerGuard {
	return &PowerGuard{gpus: gpus, file: file, held: map[int]*guardedGPU{}}
}

// devicePaths returns the state and lock files of GPU i of gpus, named after base
// (PowerStateFile's path), the GPU's kind and its UUID (its index when it has none).
func devicePaths(base string, gpus GPUs, i int, uuid string) (state, lock string) {
	id := strconv.Itoa(i)
	if uuid != "" {
		id = uuid
	}
	key := gpus.Kind() + "-" + strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, id)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	return stem + "-" + key + ".json", stem + "-" + key + ".lock"
}

// uuidOf returns GPU i's UUID, empty when the GPU does not say.
func uuidOf(gpus GPUs, i int) string {
	if g, err := gpus.Read(i); err == nil {
		return g.UUID
	}
	return ""
}

// Set sets GPU i's limit. The first time it changes GPU i it takes the GPU's lock
// (failing with a *LockedError, nothing changed, when another process holds it) and
// saves the original limit; when that first change fails, the state file is removed
// and the lock released again.
func (p *PowerGuard) Set(i int, watts float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.held[i]
	if g == nil {
		var err error
		if g, err = p.acquire(i); err != nil {
			return err
		}
	}
	if err := p.gpus.SetPowerLimit(i, watts); err != nil {
		if !slices.Contains(p.order, i) {
			os.Remove(g.state)
			g.lock.unlock()
			delete(p.held, i)
		}
		return err
	}
	if !slices.Contains(p.order, i) {
		p.order = append(p.order, i)
	}
	return nil
}

// acquire locks GPU i and writes its state file. A state file already there was
// left by a process that died mid-change (it no longer holds the lock): its
// original limit is the one to restore, not the limit it left behind.
func (p *PowerGuard) acquire(i int) (*guardedGPU, error) {
	uuid := uuidOf(p.gpus, i)
	state, lockPath := devicePaths(p.file, p.gpus, i, uuid)
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		return nil, fmt.Errorf("power limit: saving the original limit before changing it: %w", err)
	}
	lock, err := tryLock(lockPath)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("GPU %d: %w", i, err)
	} else if err != nil {
		return nil, fmt.Errorf("power limit: saving the original limit before changing it: %w", err)
	}
	g := &guardedGPU{lock: lock, state: state}
	if prev, err := readSaved(state); err == nil && prev.Kind == p.gpus.Kind() && len(prev.Limits) == 1 {
		g.saved = prev.Limits[0]
		g.saved.Index = i
	} else {
		w, err := p.gpus.PowerLimit(i)
		if err != nil {
			lock.unlock()
			return nil, fmt.Errorf("power limit: reading the original: %w", err)
		}
		g.saved = savedLimit{Index: i, UUID: uuid, LimitW: w}
	}
	data, _ := json.MarshalIndent(savedLimits{PID: os.Getpid(), Kind: p.gpus.Kind(), Limits: []savedLimit{g.saved}}, "", "  ")
	if err := writeFileAtomic(state, data); err != nil {
		lock.unlock()
		return nil, fmt.Errorf("power limit: saving the original limit before changing it: %w", err)
	}
	p.held[i] = g
	return g, nil
}

// CheckUnlocked returns a *LockedError (wrapped, naming the GPU) when another
// process holds the power lock of one of gpus, nil when none does: a look before a
// run, so a second sweep refuses before it starts. It takes each lock for an instant
// and changes nothing.
func CheckUnlocked(gpus GPUs, file string) error {
	for i := range gpus.Count() {
		_, lockPath := devicePaths(file, gpus, i, uuidOf(gpus, i))
		if _, err := os.Stat(lockPath); err != nil {
			continue // never locked: nothing to look at, nothing to create
		}
		l, err := tryLock(lockPath)
		if err != nil {
			return fmt.Errorf("GPU %d: %w", i, err)
		}
		l.unlock()
	}
	return nil
}

// Changed reports whether the guard has changed a limit it has not restored yet.
func (p *PowerGuard) Changed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.order) > 0
}

// Original returns GPU i's limit before the guard changed it, and whether it did.
func (p *PowerGuard) Original(i int) (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.held[i]
	if !ok || !slices.Contains(p.order, i) {
		return 0, false
	}
	return g.saved.LimitW, true
}

// Restore sets every GPU the guard changed back to its original limit, in the
// reverse order of the changes, removing each one's state file and releasing its
// lock once it is back. A GPU that fails keeps its state file (the next start
// retries) and its lock until the process ends. It is safe to call more than once;
// with nothing left to restore it does nothing.
func (p *PowerGuard) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	var left []int
	for k := len(p.order) - 1; k >= 0; k-- {
		i := p.order[k]
		g := p.held[i]
		if err := p.gpus.SetPowerLimit(i, g.saved.LimitW); err != nil {
			errs = append(errs, fmt.Errorf("restoring GPU %d to %.0f W: %w", i, g.saved.LimitW, err))
			left = append([]int{i}, left...)
			continue
		}
		if err := os.Remove(g.state); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		g.lock.unlock()
		delete(p.held, i)
	}
	p.order = left
	return errors.Join(errs...)
}

// readSaved reads a power state file.
func readSaved(file string) (savedLimits, error) {
	var st savedLimits
	data, err := os.ReadFile(file)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("power state %s is damaged: %w", file, err)
	}
	return st, nil
}

// RestoreSaved restores limits a previous process saved beside file (the state dir's
// PowerStateFile) and never restored (it crashed or was killed), then removes their
// state files. It returns one line per GPU restored. It leaves a GPU alone, without
// a word, while another process holds its lock (that process is changing it now and
// will restore it), and leaves the limits saved for another kind of device.
func RestoreSaved(gpus GPUs, file string) ([]string, error) {
	var lines []string
	var errs []error
	if l, err := restoreLegacy(gpus, file); err != nil {
		errs = append(errs, err)
	} else {
		lines = append(lines, l...)
	}
	stem := strings.TrimSuffix(file, filepath.Ext(file))
	files, _ := filepath.Glob(stem + "-*.json")
	for _, f := range files {
		l, err := restoreDevice(gpus, file, f)
		if l != "" {
			lines = append(lines, l)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return lines, errors.Join(errs...)
}

// restoreDevice restores the one GPU a per-GPU state file names, under its lock.
func restoreDevice(gpus GPUs, base, file string) (string, error) {
	st, err := readSaved(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // restored by its owner meanwhile
	}
	if err != nil {
		os.Remove(file)
		return "", fmt.Errorf("%w (removed)", err)
	}
	if gpus == nil || gpus.Kind() != st.Kind || len(st.Limits) != 1 {
		return "", fmt.Errorf("power limits saved in %s are for %s GPUs, which this run did not open; they stay saved", file, st.Kind)
	}
	l := st.Limits[0]
	i := l.Index
	if l.UUID != "" { // match by UUID in case the device order changed
		for j := range gpus.Count() {
			if uuidOf(gpus, j) == l.UUID {
				i = j
			}
		}
	}
	_, lockPath := devicePaths(base, gpus, i, l.UUID)
	lock, err := tryLock(lockPath)
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return "", nil // its owner runs and will restore it
		}
		return "", err
	}
	defer lock.unlock()
	if _, err := os.Stat(file); err != nil {
		return "", nil // its owner restored it before we took the lock
	}
	line := ""
	cur, err := gpus.PowerLimit(i)
	if err != nil || cur != l.LimitW {
		if err := gpus.SetPowerLimit(i, l.LimitW); err != nil {
			return "", fmt.Errorf("restoring saved power limits: GPU %d: %w", i, err)
		}
		line = fmt.Sprintf("restored GPU %d power limit to %.0f W (left at %.0f W by llmbench pid %d, which did not finish)", i, l.LimitW, cur, st.PID)
	}
	return line, os.Remove(file)
}

// restoreLegacy restores the single state file of every GPU an older llmbench wrote.
func restoreLegacy(gpus GPUs, file string) ([]string, error) {
	st, err := readSaved(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		os.Remove(file)
		return nil, fmt.Errorf("%w (removed)", err)
	}
	if st.PID != os.Getpid() && processAlive(st.PID) {
		return nil, fmt.Errorf("power limits were changed by llmbench pid %d, which still runs: not touching them", st.PID)
	}
	if gpus == nil || gpus.Kind() != st.Kind {
		return nil, fmt.Errorf("power limits saved in %s are for %s GPUs, which this run did not open; they stay saved", file, st.Kind)
	}
	var lines []string
	var errs []error
	for _, l := range st.Limits {
		i := l.Index
		if l.UUID != "" { // match by UUID in case the device order changed
			for j := range gpus.Count() {
				if uuidOf(gpus, j) == l.UUID {
					i = j
				}
			}
		}
		cur, err := gpus.PowerLimit(i)
		if err == nil && cur == l.LimitW {
			continue
		}
		if err := gpus.SetPowerLimit(i, l.LimitW); err != nil {
			errs = append(errs, fmt.Errorf("GPU %d: %w", i, err))
			continue
		}
		lines = append(lines, fmt.Sprintf("restored GPU %d power limit to %.0f W (left at %.0f W by llmbench pid %d, which did not finish)", i, l.LimitW, cur, st.PID))
	}
	if len(errs) > 0 {
		return lines, fmt.Errorf("restoring saved power limits: %w", errors.Join(errs...))
	}
	return lines, os.Remove(file)
}

// processAlive reports whether a process with pid exists (signal 0 on unix).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return false // FindProcess succeeding is no proof there; restore anyway
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}
