package serving

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrival configures the arrival schedule of a serving run.
type Arrival struct {
	Rate       float64 // requests/s; +Inf sends everything at time 0
	Burstiness float64 // Gamma shape k (1 = Poisson); +Inf = evenly spaced
	// RampUp, when "linear" or "exponential", moves the rate from RampStart to RampEnd
	// over the run instead of using Rate.
	RampUp             string
	RampStart, RampEnd float64
	Seed               int64
}

// RateAt returns the target rate for request i of n.
func (a Arrival) RateAt(i, n int) float64 {
	if a.RampUp == "" {
		return a.Rate
	}
	p := float64(i) / float64(max(n-1, 1))
	if a.RampUp == "exponential" {
		return a.RampStart * math.Pow(a.RampEnd/a.RampStart, p)
	}
	return a.RampStart + (a.RampEnd-a.RampStart)*p
}

// Validate reports a schedule that cannot be built.
func (a Arrival) Validate() error {
	switch a.RampUp {
	case "":
		if !(a.Rate > 0) {
			return fmt.Errorf("--request-rate must be positive (or inf), got %v", a.Rate)
		}
	case "linear", "exponential":
		if a.RampStart < 0 || a.RampEnd < 0 || a.RampStart > a.RampEnd {
			return fmt.Errorf("ramp-up: need 0 ≤ --ramp-up-start-rps ≤ --ramp-up-end-rps")
		}
		if a.RampUp == "exponential" && a.RampStart == 0 {
			return fmt.Errorf("ramp-up: exponential needs --ramp-up-start-rps > 0")
		}
	default:
		return fmt.Errorf("--ramp-up-strategy %q: want linear or exponential", a.RampUp)
	}
	if !(a.Burstiness > 0) {
		return fmt.Errorf("--burstiness must be positive, got %v", a.Burstiness)
	}
	return nil
}

// Schedule returns the absolute send offsets of n requests from the start, as vLLM
// builds them: gaps ~ Gamma(shape=k, scale=1/(rate·k)) accumulated, and, at a fixed
// rate, rescaled so the last send falls at n/rate.
func (a Arrival) Schedule(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(uint64(a.Seed), 0xa441a1))
	at := make([]float64, n)
	sum := 0.0
	for i := range n {
		r := a.RateAt(i, n)
		switch {
		case math.IsInf(r, 1):
		case math.IsInf(a.Burstiness, 1):
			sum += 1 / r
		case r > 0:
			sum += gamma(rng, a.Burstiness) / (r * a.Burstiness)
		}
		at[i] = sum
	}
	if a.RampUp == "" && !math.IsInf(a.Rate, 1) && n > 0 && at[n-1] > 0 {
		f := float64(n) / a.Rate / at[n-1]
		for i := range at {
			at[i] *= f
		}
	}
	out := make([]time.Duration, n)
	for i, s := range at {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// gamma draws from Gamma(shape k, scale 1) (Marsaglia and Tsang; boosted for k < 1).
func gamma(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		return gamma(rng, k+1) * math.Pow(rng.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// Pacer releases requests at absolute offsets from a start instant. The runtime's
// timers wake a goroutine up to a millisecond late (the poller sleeps in whole
// milliseconds), so the pacer waits in three stages: a runtime timer until
// timerSlack+Spin before the send (cancellable, costs nothing), a kernel sleep
// (nanosleep, tens of microseconds late) until Spin before it, then a busy-wait on the
// monotonic clock. The busy-wait holds a processor for at most Spin per request and
// does not yield: a yield puts the pacer behind every runnable goroutine.
type Pacer struct {
	// Spin is how close to a send the pacer stops sleeping and busy-waits
	// (DefaultSpin when zero).
	Spin time.Duration
}

// DefaultSpin is the Pacer's busy-wait window when none is given: a little more than
// a kernel sleep's usual overshoot (the 50 µs default timer slack plus the wake-up).
const DefaultSpin = 150 * time.Microsecond

// timerSlack is how late a runtime timer may fire when the process is idle.
const timerSlack = 2 * time.Millisecond

// maxKernelSleep bounds one uncancellable kernel sleep, so ctx is checked often.
const maxKernelSleep = 5 * time.Millisecond

// Wait blocks until start+at (on the monotonic clock) and returns the instant it
// released, or ctx's error.
func (p Pacer) Wait(ctx context.Context, start time.Time, at time.Duration, t *time.Timer) (time.Time, error) {
	spin := p.Spin
	if spin <= 0 {
		spin = DefaultSpin
	}
	target := start.Add(at)
	for {
		d := time.Until(target)
		switch {
		case d <= 0:
			return time.Now(), nil
		case ctx.Err() != nil:
			return time.Time{}, ctx.Err()
		case d > timerSlack+spin:
			t.Reset(d - timerSlack - spin)
			select {
			case <-ctx.Done():
				t.Stop()
				return time.Time{}, ctx.Err()
			case <-t.C:
			}
		case d > spin:
			kernelSleep(min(d-spin, maxKernelSleep))
		default:
			for {
				if now := time.Now(); !now.Before(target) {
					return now, nil
				}
			}
		}
	}
}
