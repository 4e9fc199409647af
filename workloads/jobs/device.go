package jobs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"llmbench/workloads/power"
	"llmbench/workloads/result"
	"llmbench/workloads/telemetry"
)

// Device is the telemetry a job measures with and whose power limits it may sweep:
// the GPUs of one kind (nil when none), a sampler of them and the CPU, the note that
// says which (or why none), and the state dir that holds saved power limits.
type Device struct {
	Kind     string
	GPUs     telemetry.GPUs
	Sampler  *telemetry.Sampler
	Note     string
	stateDir string
}

// OpenDevice opens the GPUs of kind (auto, nvml, fake, none; "" = auto) and restores
// power limits a previous llmbench left changed (it crashed or was killed mid-sweep),
// telling warn what it restored.
func OpenDevice(kind string, warn func(string)) (*Device, error) {
	if kind == "" {
		kind = "auto"
	}
	dir, err := telemetry.StateDir()
	if err != nil {
		return nil, err
	}
	gpus, note, err := telemetry.Open(kind, filepath.Join(dir, telemetry.FakeStateFile))
	if err != nil {
		return nil, err
	}
	d := &Device{Kind: kind, GPUs: gpus, Sampler: telemetry.NewSampler(gpus, note), Note: note, stateDir: dir}
	if gpus != nil {
		lines, err := telemetry.RestoreSaved(gpus, d.stateFile())
		for _, l := range lines {
			warn("llmbench: " + l)
		}
		if err != nil {
			warn("llmbench: " + err.Error())
		}
	}
	return d, nil
}

func (d *Device) stateFile() string { return filepath.Join(d.stateDir, telemetry.PowerStateFile) }

// Close releases the GPUs and the sampler's files.
func (d *Device) Close() {
	if d.Sampler != nil {
		d.Sampler.Close()
	}
	if d.GPUs != nil {
		d.GPUs.Close()
	}
}

// GPUName is the first GPU's name, "" when there is none.
func (d *Device) GPUName() string {
	if d.GPUs != nil && d.GPUs.Count() > 0 {
		if g, err := d.GPUs.Read(0); err == nil {
			return g.Name
		}
	}
	return ""
}

// Env describes this machine, build and telemetry for a stored run.
func (d *Device) Env(build string) []result.KV {
	gpu := d.GPUName()
	if gpu == "" {
		gpu = "none"
	}
	return result.Environment(result.KV{Key: "build", Value: "llmbench " + build},
		result.KV{Key: "gpu", Value: gpu}, result.KV{Key: "telemetry", Value: d.Note})
}

// PowerRange is what a Device allows for power limits: GPU 0's range, default and
// current limit in watts (0 when unknown), and Refused, when limits cannot be set,
// saying why in a few words ("no GPU (…)", "needs root").
type PowerRange struct {
	MinW, MaxW, DefaultW, CurrentW float64
	Refused                        string
}

// PowerRange reads GPU 0's power-limit range. Whether a limit may be set is asked
// of the driver by setting the current limit again (no change when allowed): a
// refusal (telemetry.ErrPermission) is "needs root".
func (d *Device) PowerRange() PowerRange {
	if d.GPUs == nil || d.GPUs.Count() == 0 {
		return PowerRange{Refused: "no GPU (" + strings.TrimSuffix(d.Note, ".") + ")"}
	}
	g, err := d.GPUs.Read(0)
	if err != nil {
		return PowerRange{Refused: err.Error()}
	}
	p := PowerRange{MinW: g.PowerMinW, MaxW: g.PowerMaxW, DefaultW: g.PowerDefaultW, CurrentW: g.PowerLimitW}
	if cur, err := d.GPUs.PowerLimit(0); err == nil && cur > 0 {
		p.CurrentW = cur
		if err := d.GPUs.SetPowerLimit(0, cur); errors.Is(err, telemetry.ErrPermission) {
			p.Refused = "needs root"
		} else if err != nil {
			p.Refused = err.Error()
		}
	}
	return p
}

// CheckLimits says in one line why limits cannot be set on this device (nil: they
// can, or there are none), before anything runs.
func (d *Device) CheckLimits(limits []float64) error {
	if len(limits) == 0 {
		return nil
	}
	return power.Check(d.GPUs, d.Note, limits, d.stateFile())
}

// sweep runs each at every power limit (restoring the originals afterwards), or once
// with the limits untouched when limits is empty.
func (d *Device) sweep(ctx context.Context, limits []float64, settle time.Duration, logf func(string, ...any), each func(ctx context.Context, watts float64) error) error {
	if len(limits) == 0 {
		return each(ctx, 0)
	}
	if err := d.CheckLimits(limits); err != nil {
		return err
	}
	guard := telemetry.NewPowerGuard(d.GPUs, d.stateFile())
	return power.Sweep(ctx, d.GPUs, guard, limits, power.Settle{Timeout: settle}, logf, func(ctx context.Context, p power.Point) error {
		return each(ctx, p.LimitW)
	})
}

// Devices opens each kind of device once and keeps it for the jobs that name it (a
// profile's runs may name several).
type Devices struct {
	warn  func(string)
	kinds map[string]*Device
}

// NewDevices returns an empty set; warn takes the lines opening a device prints.
func NewDevices(warn func(string)) *Devices {
	return &Devices{warn: warn, kinds: map[string]*Device{}}
}

// Get returns the device of kind ("" = auto), opening it on first use.
func (ds *Devices) Get(kind string) (*Device, error) {
	if kind == "" {
		kind = "auto"
	}
	if d := ds.kinds[kind]; d != nil {
		return d, nil
	}
	d, err := OpenDevice(kind, ds.warn)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", kind, err)
	}
	ds.kinds[kind] = d
	return d, nil
}

// Close releases every device opened.
func (ds *Devices) Close() {
	for _, d := range ds.kinds {
		d.Close()
	}
}
