package telemetry

import (
	"fmt"
	"math"
	"time"
)

// Sampler takes telemetry readings of the GPUs (when there are any) and the CPU.
// It satisfies workloads/run's Sampler, which calls Sample on the run clock; it is
// not safe for concurrent use (run serialises its calls).
type Sampler struct {
	gpus GPUs
	cpu  *CPUReader
	note string
	now  func() time.Time
}

// NewSampler returns a sampler of gpus (nil: the CPU only) and this machine's CPU;
// note says why there is no GPU, or which GPUs there are.
func NewSampler(gpus GPUs, note string) *Sampler {
	return &Sampler{gpus: gpus, cpu: NewCPUReader(), note: note, now: time.Now}
}

// Note says which GPUs are sampled, or why none is.
func (s *Sampler) Note() string { return s.note }

// GPUs returns the sampled GPUs (nil when there are none).
func (s *Sampler) GPUs() GPUs { return s.gpus }

// Read takes one reading stamped at (a time on the caller's clock). A GPU that cannot
// be read appears with its error in Errors.
func (s *Sampler) Read(at time.Duration) Reading {
	r := Reading{At: at, Time: s.now(), GPUs: []GPU{}}
	if s.gpus != nil {
		r.GPUKind = s.gpus.Kind()
		for i := range s.gpus.Count() {
			g, err := s.gpus.Read(i)
			if err != nil {
				g = GPU{Index: i, PState: -1, Errors: []string{err.Error()}}
			}
			r.GPUs = append(r.GPUs, g)
		}
	}
	r.CPU = s.cpu.Read()
	return r
}

// Close releases the files the sampler keeps open to read the CPU (a later Read opens
// them again); it does not close the GPUs.
func (s *Sampler) Close() { s.cpu.Close() }

// Sample implements workloads/run's Sampler: a Read returned as a Reading.
func (s *Sampler) Sample(at time.Duration) any { return s.Read(at) }

// Power summarises the power and energy of a span of readings, taken from one
// energy device: the device that did the work.
type Power struct {
	// Device is the energy device the figures come from: "cpu" (RAPL package
	// energy), "gpu" (every GPU, summed) or "gpu:N"; "none" or empty when no device
	// was named.
	Device string `json:"device,omitempty"`
	// Source says how the device's power was read: "rapl", "nvml", or "fake" (the
	// scripted device: not real readings); empty when nothing measured it.
	Source string `json:"source"`
	// GPUSource is the kind of GPU the span's readings carried ("nvml" or "fake"),
	// whether or not a GPU is the energy device: a fake GPU sampled beside the CPU
	// engine shows here and nowhere in the energy.
	GPUSource string `json:"gpu_source,omitempty"`
	// Note says why the energy was not measured ("RAPL: no powercap zones").
	Note    string  `json:"note,omitempty"`
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	MinW    float64 `json:"power_min_w"`
	MeanW   float64 `json:"power_mean_w"`
	MaxW    float64 `json:"power_max_w"`
	// EnergyJ is the energy used over the span: the difference of the energy
	// counters where the devices keep one, else the integral of the power readings.
	EnergyJ float64 `json:"energy_j"`
	// LimitW is the GPUs' summed power limit at the end of the span (0 for the CPU).
	LimitW float64 `json:"power_limit_w,omitempty"`
	// SMClockMHz and TempMaxC are the energy GPUs' mean SM clock and highest
	// temperature (0 when the energy device is not a GPU).
	SMClockMHz float64 `json:"sm_clock_mean_mhz,omitempty"`
	TempMaxC   int     `json:"temp_max_c,omitempty"`
}

// Known reports whether energy was measured.
func (p Power) Known() bool { return p.Source != "" && p.Seconds > 0 && p.EnergyJ > 0 }

// EnergyDevice returns the energy device; results saved before energy devices
// existed kept it in Source ("gpu", "cpu").
func (p Power) EnergyDevice() string {
	if p.Device == "" && (p.Source == EnergyGPUs || p.Source == EnergyCPU) {
		return p.Source
	}
	return p.Device
}

// Provenance returns how the power was read ("rapl", "nvml", "fake"), empty when
// nothing was measured or an old result did not say.
func (p Power) Provenance() string {
	if p.Source == EnergyGPUs || p.Source == EnergyCPU {
		return ""
	}
	return p.Source
}

// Fake reports whether any reading summarised here came from the Fake device: the
// energy itself or the GPU readings beside it.
func (p Power) Fake() bool { return p.Source == SourceFake || p.GPUSource == SourceFake }

// Describe says in one phrase where the energy came from and whether it is real:
// "CPU package, real readings (RAPL)", "GPU 0, FAKE readings (…)", or why nothing
// was measured.
func (p Power) Describe() string {
	dev := p.EnergyDevice()
	if !p.Known() {
		why := p.Note
		if why == "" {
			why = "no readings"
		}
		if dev == "" || dev == EnergyNone {
			return "not measured (" + why + ")"
		}
		return "not measured: " + DeviceLabel(dev) + " (" + why + ")"
	}
	s := DeviceLabel(dev)
	if src := p.Provenance(); src != "" {
		s += ", " + SourceLabel(src)
	}
	return s
}

// Summarize reduces readings (in time order) to the Power of device (see
// ParseEnergyDevice): the CPU packages' RAPL energy for "cpu", the GPUs' for "gpu"
// or "gpu:N", nothing for "none" or "". Energy needs at least two readings; when the
// device has none, Note says why. Only the named device counts: a GPU sampled beside
// a CPU engine never lends it its joules.
func Summarize(rs []Reading, device string) Power {
	p := Power{Device: device, Samples: len(rs)}
	if len(rs) == 0 {
		p.Note = "no telemetry readings"
		return p
	}
	first, last := rs[0], rs[len(rs)-1]
	p.Seconds = (last.At - first.At).Seconds()
	if len(first.GPUs) > 0 {
		p.GPUSource = first.GPUKind
	}
	var watts []float64
	if gi, ok := energyGPU(device); ok {
		var note string
		if watts, note = p.summarizeGPUs(rs, gi); note != "" {
			p.Note = note
			return p
		}
	} else {
		switch device {
		case EnergyCPU:
			if !first.CPU.HasEnergy || !last.CPU.HasEnergy {
				why := last.CPU.Note
				if why == "" {
					why = "RAPL: not readable"
				}
				p.Note = why
				return p
			}
			p.Source = SourceRAPL
			for i, r := range rs {
				if i > 0 { // the first reading's power covers time before the span
					watts = append(watts, r.CPU.PowerW)
				}
			}
			p.EnergyJ = last.CPU.EnergyJ - first.CPU.EnergyJ
		case EnergyNone:
			p.Note = "energy device: none"
			return p
		default:
			p.Note = "no energy device named: energy_device / --energy-device cpu, gpu or gpu:N"
			return p
		}
	}
	p.MinW = math.Inf(1)
	var sum float64
	for _, w := range watts {
		p.MinW, p.MaxW = min(p.MinW, w), max(p.MaxW, w)
		sum += w
	}
	if len(watts) == 0 {
		p.MinW = 0
	}
	switch {
	case p.Seconds > 0 && p.EnergyJ > 0:
		// The counters' mean; instantaneous readings may all lie on one side of it.
		p.MeanW = p.EnergyJ / p.Seconds
		if len(watts) > 0 {
			p.MinW, p.MaxW = min(p.MinW, p.MeanW), max(p.MaxW, p.MeanW)
		}
	case len(watts) > 0:
		p.MeanW = sum / float64(len(watts))
	}
	return p
}

// summarizeGPUs fills p from GPU gi of the readings (every GPU when gi < 0) and
// returns the power of each reading, or a note saying why there is none.
func (p *Power) summarizeGPUs(rs []Reading, gi int) ([]float64, string) {
	pick := func(r Reading) []GPU {
		if gi < 0 {
			return r.GPUs
		}
		for _, g := range r.GPUs {
			if g.Index == gi {
				return []GPU{g}
			}
		}
		return nil
	}
	first, last := pick(rs[0]), pick(rs[len(rs)-1])
	if len(first) == 0 || len(last) == 0 {
		if len(rs[0].GPUs) == 0 {
			return nil, DeviceLabel(p.Device) + ": no GPU was sampled"
		}
		return nil, fmt.Sprintf("%s: not among the %d GPU(s) sampled", DeviceLabel(p.Device), len(rs[0].GPUs))
	}
	p.Source = rs[0].GPUKind
	if p.Source == "" {
		p.Source = SourceNVML
	}
	var watts []float64
	var clock float64
	var nclock int
	for _, r := range rs {
		var w float64
		for _, g := range pick(r) {
			w += g.PowerW
			if g.SMClockMHz > 0 {
				clock += float64(g.SMClockMHz)
				nclock++
			}
			p.TempMaxC = max(p.TempMaxC, g.TempC)
		}
		watts = append(watts, w)
	}
	if nclock > 0 {
		p.SMClockMHz = clock / float64(nclock)
	}
	for _, g := range last {
		p.LimitW += g.PowerLimitW
	}
	counters := len(first) == len(last)
	var e float64
	for i := 0; counters && i < len(first); i++ {
		a, b := first[i], last[i]
		if !a.HasEnergy || !b.HasEnergy || b.EnergyJ < a.EnergyJ {
			counters = false
			break
		}
		e += b.EnergyJ - a.EnergyJ
	}
	if counters {
		p.EnergyJ = e
	} else {
		p.EnergyJ = integrate(rs, watts)
	}
	return watts, ""
}

// integrate is the trapezoid integral of watts over the readings' times, in joules.
func integrate(rs []Reading, watts []float64) float64 {
	var e float64
	for i := 1; i < len(rs); i++ {
		e += (watts[i-1] + watts[i]) / 2 * (rs[i].At - rs[i-1].At).Seconds()
	}
	return e
}

// String formats the summary for a log line.
func (p Power) String() string {
	if !p.Known() {
		return "power: " + p.Describe()
	}
	return fmt.Sprintf("%s power %.0f/%.0f/%.0f W (min/mean/max), %.1f J over %.2f s",
		p.Describe(), p.MinW, p.MeanW, p.MaxW, p.EnergyJ, p.Seconds)
}
