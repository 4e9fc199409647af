package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// Fake GPU constants: an H100 SXM5 80GB as nvidia-smi shows it.
const (
	fakeName      = "Fake H100 80GB HBM3"
	fakeMaxW      = 700.0
	fakeMinW      = 200.0
	fakeIdleW     = 70.0
	fakeBusyW     = 660.0 // the draw at full load, under no limit
	fakeMaxSMMHz  = 1980
	fakeMemMHz    = 2619
	fakeMemTotal  = 81559 << 20
	fakeSettleTau = 40 * time.Millisecond // how fast the draw follows a new limit
)

// FakeOptions configures a Fake.
type FakeOptions struct {
	GPUs int // number of GPUs (1 when 0)
	// StateFile, when set, keeps the power limits across processes (like a real
	// driver does): read when the Fake is made, written on every change.
	StateFile string
	// DenySet makes SetPowerLimit fail with ErrPermission, like NVML without root.
	DenySet bool
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Load is the run's load in [0, 1], read at every reading: the draw asks for
	// idle + load·(busy − idle) watts. Nil: this process's CPU utilisation (its CPU
	// time over wall time × cores), so the fake draws what the run demands.
	Load func() float64
}

// Fake is a scripted H100-like GPU set for tests and screenshots; its readings are
// labelled fake wherever they appear. Its power draw follows the run's load (see
// FakeOptions.Load: 70 W idle, 660 W at full load) capped by the power limit,
// approaching a new demand or limit within a few tens of milliseconds; a lower limit
// lowers the draw, the SM clock (roughly with the cube root of the power ratio) and
// the temperature, and raises the sw_power_cap throttle reason. With a StateFile its
// limits are shared by every process that opens it, as a driver's are.
type Fake struct {
	mu      sync.Mutex
	opt     FakeOptions
	limits  []float64
	draw    []float64
	energy  []float64 // joules since start
	target  float64   // the current demand (watts)
	load    float64
	last    time.Time
	closed  bool
	setLogs []string
}

// fakeState is the StateFile's content.
type fakeState struct {
	LimitsW []float64 `json:"limits_w"`
}

// NewFake returns a Fake at the default limit (700 W), or the limits saved in
// opt.StateFile.
func NewFake(opt FakeOptions) (*Fake, error) {
	if opt.GPUs <= 0 {
		opt.GPUs = 1
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Load == nil {
		opt.Load = newProcessLoad(time.Now).read
	}
	f := &Fake{opt: opt, last: opt.Now()}
	for range opt.GPUs {
		f.limits = append(f.limits, fakeMaxW)
		f.energy = append(f.energy, 0)
	}
	if err := f.reload(); err != nil {
		return nil, err
	}
	f.load = clamp01(opt.Load())
	f.target = demand(f.load)
	for i := range f.limits {
		f.draw = append(f.draw, min(f.target, 0.985*f.limits[i]))
	}
	return f, nil
}

// reload reads the limits from the StateFile (a few bytes): another process may
// have set them since.
func (f *Fake) reload() error {
	if f.opt.StateFile == "" {
		return nil
	}
	data, err := os.ReadFile(f.opt.StateFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fake device: %w", err)
	}
	var saved fakeState
	if err := json.Unmarshal(data, &saved); err != nil {
		return fmt.Errorf("fake device: %s: %w", f.opt.StateFile, err)
	}
	for i := range min(len(saved.LimitsW), len(f.limits)) {
		f.limits[i] = saved.LimitsW[i]
	}
	return nil
}

// demand is the draw the scripted workload asks for at a load in [0, 1].
func demand(load float64) float64 { return fakeIdleW + load*(fakeBusyW-fakeIdleW) }

func clamp01(v float64) float64 {
	if !(v > 0) { // NaN too
		return 0
	}
	return min(v, 1)
}

// advance reads the load, moves the draw towards min(demand, limit) and integrates
// energy up to now.
func (f *Fake) advance() {
	f.reload() // a damaged file keeps the limits as they were
	now := f.opt.Now()
	dt := now.Sub(f.last)
	if dt <= 0 {
		return
	}
	f.load = clamp01(f.opt.Load())
	f.target = demand(f.load)
	k := 1 - math.Exp(-float64(dt)/float64(fakeSettleTau))
	for i := range f.draw {
		goal := min(f.target, 0.985*f.limits[i])
		prev := f.draw[i]
		f.draw[i] += (goal - f.draw[i]) * k
		f.energy[i] += (prev + f.draw[i]) / 2 * dt.Seconds()
	}
	f.last = now
}

// Kind implements GPUs.
func (f *Fake) Kind() string { return "fake" }

// Count implements GPUs.
func (f *Fake) Count() int { return len(f.limits) }

func (f *Fake) check(i int) error {
	if f.closed {
		return errors.New("fake device: closed")
	}
	if i < 0 || i >= len(f.limits) {
		return fmt.Errorf("fake device: no GPU %d", i)
	}
	return nil
}

// Read implements GPUs.
func (f *Fake) Read(i int) (GPU, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(i); err != nil {
		return GPU{}, err
	}
	f.advance()
	w := f.draw[i]
	ratio := min(1, w/f.target)
	g := GPU{
		Index: i, Name: fakeName, UUID: fmt.Sprintf("GPU-fake-0000-%04d", i),
		PowerW: w, PowerLimitW: f.limits[i], PowerMinW: fakeMinW, PowerMaxW: fakeMaxW, PowerDefaultW: fakeMaxW,
		EnergyJ: 1e6 + f.energy[i], HasEnergy: true,
		SMClockMHz:  int(math.Round(fakeMaxSMMHz * math.Cbrt(ratio))),
		MemClockMHz: fakeMemMHz,
		TempC:       int(math.Round(32 + 40*(w-fakeIdleW)/(fakeMaxW-fakeIdleW))),
		UtilGPU:     int(math.Round(99 * f.load)), UtilMem: int(math.Round(55 * f.load * math.Cbrt(ratio))),
		MemUsed: 41 << 30, MemTotal: fakeMemTotal,
		PState: 0,
	}
	if f.limits[i] < f.target {
		g.Throttle = ThrottleSWPowerCap
	}
	g.ThrottleNames = ThrottleReasons(g.Throttle)
	return g, nil
}

// PowerLimit implements GPUs.
func (f *Fake) PowerLimit(i int) (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(i); err != nil {
		return 0, err
	}
	if err := f.reload(); err != nil {
		return 0, err
	}
	return f.limits[i], nil
}

// SetPowerLimit implements GPUs; the limit must lie in [200, 700] W.
func (f *Fake) SetPowerLimit(i int, watts float64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check(i); err != nil {
		return err
	}
	if f.opt.DenySet {
		return fmt.Errorf("fake device: GPU %d: %w", i, ErrPermission)
	}
	if watts < fakeMinW || watts > fakeMaxW {
		return fmt.Errorf("fake device: GPU %d: %.0f W is outside [%.0f, %.0f] W", i, watts, fakeMinW, fakeMaxW)
	}
	f.advance()
	f.limits[i] = watts
	f.setLogs = append(f.setLogs, fmt.Sprintf("%d:%g", i, watts))
	if f.opt.StateFile != "" {
		data, _ := json.Marshal(fakeState{LimitsW: f.limits})
		if err := writeFileAtomic(f.opt.StateFile, data); err != nil {
			return fmt.Errorf("fake device: %w", err)
		}
	}
	return nil
}

// Sets returns every SetPowerLimit call that succeeded, as "GPU:watts", in order.
func (f *Fake) Sets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.setLogs...)
}

// Close implements GPUs.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames
// it over path, so a crash leaves the old file or the new one, never half of one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// processLoad is this process's CPU utilisation: CPU time over wall time × cores,
// measured between readings at least 50 ms apart (the last figure in between).
type processLoad struct {
	now      func() time.Time
	lastWall time.Time
	lastCPU  time.Duration
	value    float64
}

func newProcessLoad(now func() time.Time) *processLoad {
	l := &processLoad{now: now, lastWall: now()}
	l.lastCPU, _ = processCPUTime()
	return l
}

func (l *processLoad) read() float64 {
	wall := l.now()
	dt := wall.Sub(l.lastWall)
	if dt < 50*time.Millisecond {
		return l.value
	}
	cpu, ok := processCPUTime()
	if !ok {
		return 0
	}
	l.value = clamp01(float64(cpu-l.lastCPU) / (float64(dt) * float64(runtime.NumCPU())))
	l.lastWall, l.lastCPU = wall, cpu
	return l.value
}
