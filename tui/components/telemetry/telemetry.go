// Package telemetry draws the device panel: power, clocks, temperature, utilisation
// and memory of the first GPU, or the CPU's figures when there is no GPU. Its title
// names the device, and says FAKE when the readings come from the scripted device.
package telemetry

import (
	"fmt"
	"strings"

	"llmbench/tui/components/panel"
	"llmbench/tui/components/sparkline"
	"llmbench/tui/theme"
	hw "llmbench/workloads/telemetry"
)

// KeyMap is empty: the panel takes no keys.
type KeyMap struct{}

// Model keeps the latest reading and a power history.
type Model struct {
	theme   theme.Theme
	w, h    int
	reading *hw.Reading
	power   sparkline.Model
	Note    string // why there is no GPU ("NVML: no device"), shown under the CPU figures
}

// New returns an empty panel.
func New(t theme.Theme) Model { return Model{theme: t, power: sparkline.New(t, "W"), w: 40, h: 4} }

// SetSize sets the area inside the panel's frame.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Set shows reading r and adds its power to the history.
func (m *Model) Set(r hw.Reading) {
	m.reading = &r
	if w, ok := r.GPUPowerW(); ok {
		m.power.Push(w)
	} else if r.CPU.HasEnergy {
		m.power.Push(r.CPU.PowerW)
	}
}

const gib = 1 << 30

// Title is the panel's title: "Device" and the device read, "FAKE" first when its
// readings are the scripted fake device's ("Device · FAKE · Fake H100 80GB HBM3"),
// so a cut title still says it.
func (m Model) Title() string {
	r := m.reading
	switch {
	case r == nil:
		return "Device"
	case len(r.GPUs) == 0:
		return "Device · CPU"
	}
	name := r.GPUs[0].Name
	if name == "" {
		name = fmt.Sprintf("GPU %d", r.GPUs[0].Index)
	}
	if r.FakeGPUs() {
		return "Device · FAKE · " + name
	}
	return "Device · " + name
}

// View renders the figures, one group a line.
func (m Model) View() string {
	t := m.theme
	r := m.reading
	if r == nil {
		return strings.Join(panel.Lines(t.Dim.Render("waiting for telemetry…"), m.w, m.h), "\n")
	}
	var lines []string
	if len(r.GPUs) > 0 {
		g := r.GPUs[0]
		head := fmt.Sprintf("power %.0f W / %.0f W ", g.PowerW, g.PowerLimitW)
		lines = append(lines, head+m.power.Chart(max(0, min(16, m.w-len(head)-18)))+fmt.Sprintf("  energy %s", energy(g.EnergyJ)))
		thr := "none"
		if len(g.ThrottleNames) > 0 {
			thr = t.Warn.Render(strings.Join(g.ThrottleNames, ", "))
		}
		if m.w >= 48 {
			lines = append(lines,
				fmt.Sprintf("SM %d MHz · mem %d MHz · %d °C · util %d %%", g.SMClockMHz, g.MemClockMHz, g.TempC, g.UtilGPU),
				fmt.Sprintf("mem %.1f / %.1f GiB · throttle: %s", float64(g.MemUsed)/gib, float64(g.MemTotal)/gib, thr))
		} else { // narrow: four short lines rather than cut ones
			lines = append(lines,
				fmt.Sprintf("SM %d MHz · mem %d MHz", g.SMClockMHz, g.MemClockMHz),
				fmt.Sprintf("%d °C · util %d %%", g.TempC, g.UtilGPU),
				fmt.Sprintf("mem %.1f/%.1f GiB · thr: %s", float64(g.MemUsed)/gib, float64(g.MemTotal)/gib, thr))
		}
		if len(r.GPUs) > 1 {
			lines = append(lines, t.Dim.Render(fmt.Sprintf("(GPU 0 of %d)", len(r.GPUs))))
		}
	} else {
		c := r.CPU
		lines = append(lines, fmt.Sprintf("CPU util %.0f %% · %d cores · %.0f MHz", c.UtilAll, len(c.MHz), c.MeanMHz()))
		if c.HasEnergy {
			lines = append(lines, fmt.Sprintf("power %.1f W (RAPL) %s  energy %s", c.PowerW, m.power.Chart(12), energy(c.EnergyJ)))
		} else {
			lines = append(lines, t.Dim.Render("power: RAPL not readable"))
		}
		lines = append(lines, fmt.Sprintf("RSS %.0f MiB", float64(c.RSS)/(1<<20)))
		if m.Note != "" {
			lines = append(lines, t.Dim.Render("GPU: "+m.Note))
		}
	}
	return strings.Join(panel.Lines(strings.Join(lines, "\n"), m.w, m.h), "\n")
}

func energy(j float64) string {
	if j >= 1000 {
		return fmt.Sprintf("%.1f kJ", j/1000)
	}
	return fmt.Sprintf("%.0f J", j)
}
