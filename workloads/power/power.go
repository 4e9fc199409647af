// Package power runs a workload at a list of GPU power limits: it sets each limit on
// every GPU through workloads/telemetry's PowerGuard, waits for the draw to settle, runs the
// workload, and restores the original limits afterwards — on success, on error, on
// cancellation (Ctrl-C) and on a panic; after a crash or SIGKILL, the guard's state
// file lets the next start restore them.
package power

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads/run"
	"llmbench/workloads/telemetry"
)

// ParseLimits parses a comma-separated list of watts ("600,500,450").
func ParseLimits(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSuffix(strings.TrimSpace(f), "W")
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a power limit in watts (600,500,…)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// Check says in one line why limits cannot be applied to gpus (nil when they can):
// no GPU (note says why), a limit outside a GPU's range, or (when stateFile, the
// state dir's telemetry.PowerStateFile, is given) another process changing a GPU's
// limit now. It changes nothing; the guard still enforces the lock when it changes
// a limit.
func Check(gpus telemetry.GPUs, note string, limits []float64, stateFile string) error {
	if gpus == nil || gpus.Count() == 0 {
		return fmt.Errorf("power limits: %s; nothing changed", strings.TrimSuffix(note, "."))
	}
	for i := range gpus.Count() {
		g, err := gpus.Read(i)
		if err != nil {
			return fmt.Errorf("power limits: %w; nothing changed", err)
		}
		if g.PowerMaxW <= 0 {
			continue // range unknown: the driver will say
		}
		for _, w := range limits {
			if w < g.PowerMinW || w > g.PowerMaxW {
				return fmt.Errorf("power limits: %.0f W is outside GPU %d's range %.0f–%.0f W; nothing changed", w, i, g.PowerMinW, g.PowerMaxW)
			}
		}
	}
	if stateFile != "" {
		if err := telemetry.CheckUnlocked(gpus, stateFile); err != nil {
			return fmt.Errorf("power limits: %w; nothing changed", err)
		}
	}
	return nil
}

// Settle says how to wait for the draw to follow a new limit.
type Settle struct {
	Timeout   time.Duration // give up waiting after this long (15 s when 0)
	Poll      time.Duration // time between readings (100 ms when 0)
	Tolerance float64       // relative: draw ≤ limit·(1+t) and steady within t (0.03 when 0)
}

func (s Settle) withDefaults() Settle {
	if s.Timeout <= 0 {
		s.Timeout = 15 * time.Second
	}
	if s.Poll <= 0 {
		s.Poll = 100 * time.Millisecond
	}
	if s.Tolerance <= 0 {
		s.Tolerance = 0.03
	}
	return s
}

// Point is one limit of a sweep, as reached.
type Point struct {
	Index   int           // position in the sweep
	LimitW  float64       // the limit set on every GPU
	DrawW   float64       // summed GPU draw when it settled (or when waiting gave up)
	Waited  time.Duration // how long settling took
	Settled bool          // false when Settle.Timeout ran out
}

// Sweep sets each limit on every GPU, waits for the readings to settle and calls each.
// It restores the original limits when it returns, whatever happened (error, ctx
// cancelled, panic in each); a failed restore is returned joined with each's error.
// logf receives one line per step.
func Sweep(ctx context.Context, gpus telemetry.GPUs, guard *telemetry.PowerGuard, limits []float64, st Settle,
	logf func(format string, args ...any), each func(ctx context.Context, p Point) error) (err error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	defer func() {
		if !guard.Changed() {
			return // nothing changed (refused, or failed before the first change)
		}
		rerr := guard.Restore()
		if rerr == nil {
			var orig []string
			for i := range gpus.Count() {
				if w, err := gpus.PowerLimit(i); err == nil {
					orig = append(orig, fmt.Sprintf("%.0f W", w))
				}
			}
			logf("power limits restored (%s)", strings.Join(orig, ", "))
		} else {
			rerr = fmt.Errorf("power limits NOT restored: %w (the next llmbench start retries from its state file)", rerr)
			logf("%v", rerr)
			err = errors.Join(err, rerr)
		}
	}()
	st = st.withDefaults()
	for k, w := range limits {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range gpus.Count() {
			if err := guard.Set(i, w); err != nil {
				if errors.Is(err, telemetry.ErrPermission) || errors.Is(err, telemetry.ErrLocked) {
					if guard.Changed() {
						return fmt.Errorf("power limits: %w", err)
					}
					return fmt.Errorf("power limits: %w; nothing changed", err)
				}
				return fmt.Errorf("power limit %.0f W: %w", w, err)
			}
		}
		p, err := settle(ctx, gpus, w, st)
		if err != nil {
			return err
		}
		p.Index = k
		if p.Settled {
			logf("power limit %.0f W: settled at %.0f W after %.1f s", w, p.DrawW, p.Waited.Seconds())
		} else {
			logf("power limit %.0f W: draw %.0f W still moving after %.0f s; running anyway", w, p.DrawW, p.Waited.Seconds())
		}
		if err := each(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// settle polls the GPUs until every one enforces limit w, draws at most w·(1+tol) and
// its draw moved less than tol·w since the previous reading.
func settle(ctx context.Context, gpus telemetry.GPUs, w float64, st Settle) (Point, error) {
	start := time.Now()
	prev := make([]float64, gpus.Count())
	for i := range prev {
		prev[i] = math.NaN()
	}
	t := time.NewTicker(st.Poll)
	defer t.Stop()
	for {
		var draw float64
		ok := true
		for i := range gpus.Count() {
			g, err := gpus.Read(i)
			if err != nil {
				return Point{}, fmt.Errorf("power limit %.0f W: %w", w, err)
			}
			draw += g.PowerW
			steady := math.Abs(g.PowerW-prev[i]) <= st.Tolerance*w
			if math.Abs(g.PowerLimitW-w) > 1 || g.PowerW > w*(1+st.Tolerance) || !steady {
				ok = false
			}
			prev[i] = g.PowerW
		}
		waited := time.Since(start)
		if ok || waited >= st.Timeout {
			return Point{LimitW: w, DrawW: draw, Waited: waited, Settled: ok}, nil
		}
		select {
		case <-ctx.Done():
			return Point{}, ctx.Err()
		case <-t.C:
		}
	}
}

// Row is one line of a sweep summary: a test's figure at each limit.
type Row struct {
	Test   string
	Values map[float64]float64 // limit → value (absent: not measured)
}

// Table arranges (test, limit, value) triples into rows in first-seen order and the
// limits in descending order, for the "tokens/s vs watts" summaries.
func Table(tests []string, limits []float64, values []float64) ([]Row, []float64) {
	var rows []Row
	at := map[string]int{}
	var ws []float64
	for k, name := range tests {
		i, ok := at[name]
		if !ok {
			i = len(rows)
			at[name] = i
			rows = append(rows, Row{Test: name, Values: map[float64]float64{}})
		}
		rows[i].Values[limits[k]] = values[k]
		if !slices.Contains(ws, limits[k]) {
			ws = append(ws, limits[k])
		}
	}
	slices.SortFunc(ws, func(a, b float64) int { return -cmpFloat(a, b) })
	return rows, ws
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Summary reduces a run's telemetry to the Power of energy device dev (see
// telemetry.Summarize), or nil when none of the readings are workloads/telemetry's.
func Summary(ts []run.Telemetry, dev string) *telemetry.Power {
	rs := make([]telemetry.Reading, 0, len(ts))
	for _, t := range ts {
		if d, ok := t.Data.(telemetry.Reading); ok {
			rs = append(rs, d)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	p := telemetry.Summarize(rs, dev)
	return &p
}
