package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Fake GPU constants: an H100 SXM5 80GB as nvidia-smi shows it.
const (
	fakeName      = "Fake H100 80GB HBM3"
	fakeMaxW      = 700.0
	fakeMinW      = 200.0
	fakeIdleW     = 70.0
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
}

// Fake is a scripted H100-like GPU set for tests and screenshots. Its power draw
// follows a busy workload's demand (about 560–680 W, varying over a 7-second cycle)
// capped by the power limit, approaching a new limit within a few tens of
// milliseconds; a lower limit lowers the draw, the SM clock (roughly with the cube root
// of the power ratio) and the temperature, and raises the sw_power_cap throttle
// reason.
type Fake struct {
	mu      sync.Mutex
	opt     FakeOptions
	start   time.Time
	limits  []float64
	draw    []float64
	energy  []float64 // joules since start
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
	f := &Fake{opt: opt, start: opt.Now()}
	f.last = f.start
	for range opt.GPUs {
		f.limits = append(f.limits, fakeMaxW)
		f.energy = append(f.energy, 0)
	}
	if opt.StateFile != "" {
		data, err := os.ReadFile(opt.StateFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("fake device: %w", err)
		default:
			var st fakeState
			if err := json.Unmarshal(data, &st); err != nil {
				return nil, fmt.Errorf("fake device: %s: %w", opt.StateFile, err)
			}
			for i := range min(len(st.LimitsW), len(f.limits)) {
				f.limits[i] = st.LimitsW[i]
			}
		}
	}
	for i := range f.limits {
		f.draw = append(f.draw, min(f.demand(0), f.limits[i]))
	}
	return f, nil
}

// demand is the draw the scripted workload asks for at t since the start.
func (f *Fake) demand(t time.Duration) float64 {
	return 620 + 60*math.Sin(2*math.Pi*t.Seconds()/7)
}

// advance moves the draw towards min(demand, limit) and integrates energy up to now.
func (f *Fake) advance() {
	now := f.opt.Now()
	dt := now.Sub(f.last)
	if dt <= 0 {
		return
	}
	target := f.demand(now.Sub(f.start))
	k := 1 - math.Exp(-float64(dt)/float64(fakeSettleTau))
	for i := range f.draw {
		goal := min(target, 0.985*f.limits[i])
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
	ratio := min(1, w/f.demand(f.last.Sub(f.start)))
	g := GPU{
		Index: i, Name: fakeName, UUID: fmt.Sprintf("GPU-fake-0000-%04d", i),
		PowerW: w, PowerLimitW: f.limits[i], PowerMinW: fakeMinW, PowerMaxW: fakeMaxW,
		EnergyJ: 1e6 + f.energy[i], HasEnergy: true,
		SMClockMHz:  int(math.Round(fakeMaxSMMHz * math.Cbrt(ratio))),
		MemClockMHz: fakeMemMHz,
		TempC:       int(math.Round(32 + 40*(w-fakeIdleW)/(fakeMaxW-fakeIdleW))),
		UtilGPU:     99, UtilMem: int(math.Round(55 * math.Cbrt(ratio))),
		MemUsed: 41 << 30, MemTotal: fakeMemTotal,
		PState: 0,
	}
	if f.limits[i] < f.demand(f.last.Sub(f.start)) {
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
