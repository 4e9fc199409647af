package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"llmbench/workloads/power"
	"llmbench/workloads/telemetry"
)

// telemetryDevice is what a command opened: the GPUs (nil when none), a sampler of
// them and the CPU, the note that says which (or why none), and the state dir.
type telemetryDevice struct {
	gpus     telemetry.GPUs
	sampler  *telemetry.Sampler
	note     string
	stateDir string
	// logf takes the power sweep's messages (nil: stderr, prefixed with the command);
	// a run inside the TUI sets its run's log.
	logf func(format string, a ...any)
}

// openTelemetry opens the GPUs of kind (auto, nvml, fake, none) and restores power
// limits a previous llmbench left changed (it crashed or was killed mid-sweep),
// telling stderr what it restored.
func openTelemetry(kind string) (*telemetryDevice, error) {
	dir, err := telemetry.StateDir()
	if err != nil {
		return nil, err
	}
	gpus, note, err := telemetry.Open(kind, filepath.Join(dir, telemetry.FakeStateFile))
	if err != nil {
		return nil, err
	}
	d := &telemetryDevice{gpus: gpus, sampler: telemetry.NewSampler(gpus, note), note: note, stateDir: dir}
	if gpus != nil {
		lines, err := telemetry.RestoreSaved(gpus, d.stateFile())
		for _, l := range lines {
			fmt.Fprintln(os.Stderr, "llmbench:", l)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "llmbench:", err)
		}
	}
	return d, nil
}

func (d *telemetryDevice) stateFile() string {
	return filepath.Join(d.stateDir, telemetry.PowerStateFile)
}

// Close releases the GPUs.
func (d *telemetryDevice) Close() {
	if d.gpus != nil {
		d.gpus.Close()
	}
}

// sweep runs each at every power limit (restoring the originals afterwards), or once
// with the limits untouched when limits is empty.
func (d *telemetryDevice) sweep(ctx context.Context, cmd string, limits []float64, settle time.Duration, each func(ctx context.Context, watts float64) error) error {
	if len(limits) == 0 {
		return each(ctx, 0)
	}
	if err := power.Check(d.gpus, d.note, limits, d.stateFile()); err != nil {
		return err
	}
	guard := telemetry.NewPowerGuard(d.gpus, d.stateFile())
	logf := d.logf
	if logf == nil {
		logf = func(format string, a ...any) { fmt.Fprintf(os.Stderr, cmd+": "+format+"\n", a...) }
	}
	return power.Sweep(ctx, d.gpus, guard, limits, power.Settle{Timeout: settle}, logf, func(ctx context.Context, p power.Point) error {
		return each(ctx, p.LimitW)
	})
}

func runTelemetry(ctx context.Context, args []string) error {
	fs := newFlags("telemetry", "[--device auto|nvml|fake|none] [--watch] [--interval 1s] [-n N] [--json]")
	kind := fs.String("device", "auto", "GPUs to read: auto (NVML when present), nvml, fake (a scripted H100 for tests) or none")
	watch := fs.Bool("watch", false, "keep reading, redrawn every --interval, until Ctrl-C")
	interval := fs.Duration("interval", time.Second, "time between readings with --watch")
	count := fs.Int("n", 0, "with --watch: stop after N readings (0 = until Ctrl-C)")
	asJSON := fs.Bool("json", false, "print each reading as one JSON object per line")
	if err := benchParse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return benchUsageErr("telemetry", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *interval < 10*time.Millisecond {
		return benchUsageErr("telemetry", fmt.Errorf("--interval %v: minimum 10ms", *interval))
	}
	d, err := openTelemetry(*kind)
	if err != nil {
		return benchUsageErr("telemetry", err)
	}
	defer d.Close()
	start := time.Now()
	// A first reading primes the CPU counters: utilisation and power are deltas.
	d.sampler.Read(0)
	wait := func(dt time.Duration) bool {
		t := time.NewTimer(dt)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	first := *interval
	if !*watch {
		first = 200 * time.Millisecond
	}
	if !wait(first) {
		return nil
	}
	tty := false
	if fi, err := os.Stdout.Stat(); err == nil {
		tty = fi.Mode()&os.ModeCharDevice != 0
	}
	for n := 1; ; n++ {
		r := d.sampler.Read(time.Since(start))
		if *asJSON {
			out := struct {
				telemetry.Reading
				Note string `json:"note"`
			}{r, d.note}
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			fmt.Println(string(b))
		} else {
			if *watch && tty {
				fmt.Print("\x1b[H\x1b[2J")
			}
			writeTelemetry(os.Stdout, r, d.note)
		}
		if !*watch || (*count > 0 && n >= *count) || !wait(*interval) {
			return nil
		}
		if !tty && !*asJSON {
			fmt.Println()
		}
	}
}

// writeTelemetry prints a reading in brief, as nvidia-smi and nvtop do.
func writeTelemetry(w io.Writer, r telemetry.Reading, note string) {
	var b strings.Builder
	if len(r.GPUs) == 0 {
		fmt.Fprintf(&b, "GPU  none: %s; sampling the CPU only\n", note)
	} else {
		fmt.Fprintf(&b, "%-3s %-22s %9s %13s %11s %11s %5s %8s %17s %6s %s\n",
			"GPU", "name", "power", "limit (range)", "energy", "SM/mem MHz", "temp", "util g/m", "memory", "pstate", "throttle")
		for _, g := range r.GPUs {
			if len(g.Errors) > 0 && g.Name == "" {
				fmt.Fprintf(&b, "%-3d unreadable: %s\n", g.Index, strings.Join(g.Errors, "; "))
				continue
			}
			pstate := "-"
			if g.PState >= 0 {
				pstate = fmt.Sprintf("P%d", g.PState)
			}
			energy := "-"
			if g.HasEnergy {
				energy = fmt.Sprintf("%.1f kJ", g.EnergyJ/1e3)
			}
			thr := strings.Join(g.ThrottleNames, ",")
			if thr == "" {
				thr = "none"
			}
			fmt.Fprintf(&b, "%-3d %-22.22s %7.0f W %13s %11s %11s %3d°C %3d%%/%3d%% %7d/%6d MiB %6s %s\n",
				g.Index, g.Name, g.PowerW, fmt.Sprintf("%.0f (%.0f–%.0f)", g.PowerLimitW, g.PowerMinW, g.PowerMaxW), energy,
				fmt.Sprintf("%d/%d", g.SMClockMHz, g.MemClockMHz), g.TempC, g.UtilGPU, g.UtilMem, g.MemUsed>>20, g.MemTotal>>20, pstate, thr)
			for _, e := range g.Errors {
				fmt.Fprintf(&b, "    (%s)\n", e)
			}
		}
		fmt.Fprintf(&b, "(%s)\n", note)
	}
	c := r.CPU
	cores := make([]string, len(c.Util))
	for i, u := range c.Util {
		cores[i] = fmt.Sprintf("%.0f%%", u)
	}
	fmt.Fprintf(&b, "CPU  %s · %d cores · util %.0f%% [%s] · %.0f MHz · llmbench RSS %.1f MiB · ",
		telemetry.CPUInfo().Model, len(c.MHz), c.UtilAll, strings.Join(cores, " "), c.MeanMHz(), float64(c.RSS)/(1<<20))
	if c.HasEnergy {
		fmt.Fprintf(&b, "package %.1f W (%.1f J)\n", c.PowerW, c.EnergyJ)
	} else {
		fmt.Fprintf(&b, "package energy n/a (%s)\n", c.Note)
	}
	io.WriteString(w, b.String())
}
