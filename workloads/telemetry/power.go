package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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

// PowerStateFile is the name, in the state dir, of the file that holds the original
// power limits while llmbench has changed them.
const PowerStateFile = "power-limits.json"

// FakeStateFile is the name, in the state dir, of the Fake device's limits.
const FakeStateFile = "fake-gpu.json"

// savedLimits is the content of the power state file.
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

// PowerGuard changes GPU power limits and guarantees they go back: before the first
// change it writes every original limit to a state file (so the next start can
// restore them after a crash), and Restore sets them back and removes the file.
// Its methods are safe for concurrent use (a signal handler may call Restore).
type PowerGuard struct {
	mu    sync.Mutex
	gpus  GPUs
	file  string
	orig  map[int]savedLimit
	order []int // GPUs in the order they were first changed
}

// NewPowerGuard returns a guard of gpus that keeps its state in file.
func NewPowerGuard(gpus GPUs, file string) *PowerGuard {
	return &PowerGuard{gpus: gpus, file: file, orig: map[int]savedLimit{}}
}

// Set sets GPU i's limit, first saving every GPU's original limit when this is the
// guard's first change. When the first change fails, nothing has changed and the
// state file is removed again.
func (p *PowerGuard) Set(i int, watts float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.orig) == 0 {
		st := savedLimits{PID: os.Getpid(), Kind: p.gpus.Kind()}
		for j := range p.gpus.Count() {
			w, err := p.gpus.PowerLimit(j)
			if err != nil {
				return fmt.Errorf("power limit: reading the original: %w", err)
			}
			l := savedLimit{Index: j, LimitW: w}
			if g, err := p.gpus.Read(j); err == nil {
				l.UUID = g.UUID
			}
			st.Limits = append(st.Limits, l)
		}
		data, _ := json.MarshalIndent(st, "", "  ")
		if err := writeFileAtomic(p.file, data); err != nil {
			return fmt.Errorf("power limit: saving the original limits before changing them: %w", err)
		}
		for _, l := range st.Limits {
			p.orig[l.Index] = l
		}
	}
	if err := p.gpus.SetPowerLimit(i, watts); err != nil {
		if len(p.order) == 0 {
			os.Remove(p.file)
			p.orig = map[int]savedLimit{}
		}
		return err
	}
	for _, j := range p.order {
		if j == i {
			return nil
		}
	}
	p.order = append(p.order, i)
	return nil
}

// Original returns GPU i's limit before the guard changed it, and whether it did.
func (p *PowerGuard) Original(i int) (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.orig[i]
	return l.LimitW, ok && len(p.order) > 0
}

// Restore sets every changed GPU back to its original limit, in the reverse order of
// the changes, and removes the state file once all succeeded. It is safe to call more
// than once; after the first success it does nothing.
func (p *PowerGuard) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for k := len(p.order) - 1; k >= 0; k-- {
		i := p.order[k]
		if err := p.gpus.SetPowerLimit(i, p.orig[i].LimitW); err != nil {
			errs = append(errs, fmt.Errorf("restoring GPU %d to %.0f W: %w", i, p.orig[i].LimitW, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the state file stays for the next start
	}
	p.order, p.orig = nil, map[int]savedLimit{}
	if err := os.Remove(p.file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// RestoreSaved restores limits a previous process saved in file and never restored
// (it crashed or was killed), then removes the file. It returns one line per GPU
// restored; it leaves the file alone when the process that wrote it still runs or
// saved limits of another kind of device.
func RestoreSaved(gpus GPUs, file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("power state: %w", err)
	}
	var st savedLimits
	if err := json.Unmarshal(data, &st); err != nil {
		os.Remove(file)
		return nil, fmt.Errorf("power state %s is damaged (removed): %w", file, err)
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
				if g, err := gpus.Read(j); err == nil && g.UUID == l.UUID {
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
