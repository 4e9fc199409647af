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

// Sample implements workloads/run's Sampler: a Read returned as a Reading.
func (s *Sampler) Sample(at time.Duration) any { return s.Read(at) }

// Power summarises the power and energy of a span of readings.
type Power struct {
	// Source is what was measured: "gpu" (the GPUs, summed) or "cpu" (RAPL package
	// energy); empty when nothing measured power.
	Source  string  `json:"source"`
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
	// SMClockMHz and TempMaxC are the GPUs' mean SM clock and highest temperature.
	SMClockMHz float64 `json:"sm_clock_mean_mhz,omitempty"`
	TempMaxC   int     `json:"temp_max_c,omitempty"`
}

// Known reports whether energy was measured.
func (p Power) Known() bool { return p.Source != "" && p.Seconds > 0 && p.EnergyJ > 0 }

// Summarize reduces readings (in time order) to a Power: GPU power when the readings
// carry GPUs, else RAPL's CPU package power when readable, else an empty Power. Energy
// needs at least two readings.
func Summarize(rs []Reading) Power {
	if len(rs) == 0 {
		return Power{}
	}
	first, last := rs[0], rs[len(rs)-1]
	p := Power{Samples: len(rs), Seconds: (last.At - first.At).Seconds(), MinW: math.Inf(1)}
	var watts []float64
	switch {
	case len(first.GPUs) > 0:
		p.Source = "gpu"
		counters := len(first.GPUs) == len(last.GPUs)
		var clock float64
		var nclock int
		for _, r := range rs {
			w, _ := r.GPUPowerW()
			watts = append(watts, w)
			for _, g := range r.GPUs {
				if g.SMClockMHz > 0 {
					clock += float64(g.SMClockMHz)
					nclock++
				}
				p.TempMaxC = max(p.TempMaxC, g.TempC)
			}
		}
		if nclock > 0 {
			p.SMClockMHz = clock / float64(nclock)
		}
		for _, g := range last.GPUs {
			p.LimitW += g.PowerLimitW
		}
		var e float64
		for i := 0; counters && i < len(first.GPUs); i++ {
			a, b := first.GPUs[i], last.GPUs[i]
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
	case first.CPU.HasEnergy && last.CPU.HasEnergy:
		p.Source = "cpu"
		for i, r := range rs {
			if i > 0 { // the first reading's power covers time before the span
				watts = append(watts, r.CPU.PowerW)
			}
		}
		p.EnergyJ = last.CPU.EnergyJ - first.CPU.EnergyJ
	default:
		return Power{Samples: len(rs), Seconds: p.Seconds}
	}
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
	if p.Source == "" {
		return "power: not measured"
	}
	return fmt.Sprintf("%s power %.0f/%.0f/%.0f W (min/mean/max), %.1f J over %.2f s",
		p.Source, p.MinW, p.MeanW, p.MaxW, p.EnergyJ, p.Seconds)
}
