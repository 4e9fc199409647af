package telemetry

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultInterval is the telemetry sampling period: 10 readings a second.
const DefaultInterval = 100 * time.Millisecond

// GPU is one reading of one GPU. Fields the device does not report stay zero, and
// the Has* flags say which optional counters were read.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid,omitempty"`
	// PowerW is the power draw; PowerLimitW the enforced limit, PowerMinW/PowerMaxW
	// the range the limit may be set to and PowerDefaultW the driver's default limit
	// (watts; 0 when unknown).
	PowerW        float64 `json:"power_w"`
	PowerLimitW   float64 `json:"power_limit_w"`
	PowerMinW     float64 `json:"power_min_w"`
	PowerMaxW     float64 `json:"power_max_w"`
	PowerDefaultW float64 `json:"power_default_w,omitempty"`
	// EnergyJ is the device's energy counter (joules since the driver loaded).
	EnergyJ   float64 `json:"energy_j"`
	HasEnergy bool    `json:"has_energy"`
	// SMClockMHz and MemClockMHz are the current clocks.
	SMClockMHz  int `json:"sm_clock_mhz"`
	MemClockMHz int `json:"mem_clock_mhz"`
	TempC       int `json:"temp_c"`
	// UtilGPU and UtilMem are the percentages of time a kernel ran and the memory
	// controller was busy over the driver's last sample period.
	UtilGPU int `json:"util_gpu"`
	UtilMem int `json:"util_mem"`
	// MemUsed is the memory in use as nvidia-smi's memory.used counts it (allocations,
	// not the driver's reserved memory), MemReserved that reserved memory (0 where the
	// driver does not say), MemTotal the card's memory.
	MemUsed     uint64 `json:"mem_used_bytes"`
	MemReserved uint64 `json:"mem_reserved_bytes,omitempty"`
	MemTotal    uint64 `json:"mem_total_bytes"`
	// Throttle is the bit mask of clock throttle (clock event) reasons, ThrottleNames
	// their names ("sw_power_cap", …).
	Throttle      uint64   `json:"throttle_mask"`
	ThrottleNames []string `json:"throttle"`
	PState        int      `json:"pstate"` // 0 (P0, fastest) to 15; -1 when unknown
	// Errors lists the readings the device refused ("energy: Not Supported").
	Errors []string `json:"errors,omitempty"`
}

// Throttle-reason bits, as NVML's nvmlClocksThrottleReason* (clock event reasons).
const (
	ThrottleGPUIdle       = 0x1
	ThrottleAppClocks     = 0x2
	ThrottleSWPowerCap    = 0x4
	ThrottleHWSlowdown    = 0x8
	ThrottleSyncBoost     = 0x10
	ThrottleSWThermal     = 0x20
	ThrottleHWThermal     = 0x40
	ThrottleHWPowerBrake  = 0x80
	ThrottleDisplayClocks = 0x100
	throttleKnown         = 0x1ff
)

var throttleNames = []struct {
	bit  uint64
	name string
}{
	{ThrottleGPUIdle, "idle"}, {ThrottleAppClocks, "app_clocks"}, {ThrottleSWPowerCap, "sw_power_cap"},
	{ThrottleHWSlowdown, "hw_slowdown"}, {ThrottleSyncBoost, "sync_boost"}, {ThrottleSWThermal, "sw_thermal"},
	{ThrottleHWThermal, "hw_thermal"}, {ThrottleHWPowerBrake, "hw_power_brake"}, {ThrottleDisplayClocks, "display_clocks"},
}

// ThrottleReasons names the bits set in mask; unknown bits appear as hex.
func ThrottleReasons(mask uint64) []string {
	out := []string{}
	for _, t := range throttleNames {
		if mask&t.bit != 0 {
			out = append(out, t.name)
		}
	}
	if rest := mask &^ throttleKnown; rest != 0 {
		out = append(out, fmt.Sprintf("0x%x", rest))
	}
	return out
}

// GPUs is a set of GPUs that can be read and whose power limits can be set: NVML's
// or the Fake. Methods may be called from one goroutine at a time.
type GPUs interface {
	// Kind names the implementation ("nvml", "fake"); a saved power limit is only
	// restored through the same kind.
	Kind() string
	// Count is the number of GPUs.
	Count() int
	// Read returns a reading of GPU i; optional readings a device refuses are listed
	// in GPU.Errors, and an error means the GPU could not be read at all.
	Read(i int) (GPU, error)
	// PowerLimit returns GPU i's current power-management limit in watts.
	PowerLimit(i int) (float64, error)
	// SetPowerLimit sets GPU i's power-management limit in watts. ErrPermission
	// (wrapped) means the caller lacks the right to.
	SetPowerLimit(i int, watts float64) error
	// Close releases the library.
	Close() error
}

// ErrPermission is returned (wrapped) when setting a power limit needs privileges the
// process does not have.
var ErrPermission = errors.New("permission denied (setting a power limit needs root)")

// Reading is one telemetry sample of the machine: every GPU and the CPU.
type Reading struct {
	// At is the time on the clock of whoever sampled (a run's clock).
	At   time.Duration `json:"at_ns"`
	Time time.Time     `json:"time"`
	GPUs []GPU         `json:"gpus"`
	// GPUKind is the kind of GPUs read ("nvml", or "fake": not real readings); empty
	// when there are none.
	GPUKind string   `json:"gpu_kind,omitempty"`
	CPU     CPUUsage `json:"cpu"`
}

// FakeGPUs reports whether the reading's GPUs are the scripted Fake, not hardware.
func (r Reading) FakeGPUs() bool { return r.GPUKind == SourceFake }

// GPULabel names the reading's GPUs for a brief display: "GPU", or "FAKE GPU" when
// they are the scripted Fake.
func (r Reading) GPULabel() string {
	if r.FakeGPUs() {
		return "FAKE GPU"
	}
	return "GPU"
}

// GPUPowerW returns the summed power draw of the GPUs and whether any GPU reported it.
func (r Reading) GPUPowerW() (float64, bool) {
	var w float64
	for _, g := range r.GPUs {
		w += g.PowerW
	}
	return w, len(r.GPUs) > 0
}

// Open finds the GPUs of kind: "auto" or "nvml" (NVML, loaded at run time), "fake"
// (a scripted H100-like GPU whose limits persist in fakeState when it is not empty)
// or "none". When no GPU is found it returns nil GPUs and a note saying why, never an
// error; only an unknown kind or an unreadable fake state file is an error.
func Open(kind, fakeState string) (GPUs, string, error) {
	switch strings.ToLower(kind) {
	case "", "auto", "nvml":
		g, note := openNVML()
		return g, note, nil
	case "fake":
		f, err := NewFake(FakeOptions{GPUs: 1, StateFile: fakeState})
		if err != nil {
			return nil, "", err
		}
		return f, "fake device: 1 scripted H100-like GPU (not real readings)", nil
	case "none", "cpu":
		return nil, "GPU telemetry off (--device none)", nil
	}
	return nil, "", fmt.Errorf("device %q: want auto, nvml, fake or none", kind)
}
