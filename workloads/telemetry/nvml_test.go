//go:build linux && cgo

package telemetry

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// mockGPU is an H100-like GPU behind go-nvml's mock: it keeps its power limit and
// records every set.
type mockGPU struct {
	limitMW uint32
	sets    *[]string
	deny    bool
	refuse  map[string]bool // readings that answer Not Supported
}

func (m *mockGPU) device(idx int) *mock.Device {
	ret := func(what string) nvml.Return {
		if m.refuse[what] {
			return nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.SUCCESS
	}
	return &mock.Device{
		GetNameFunc:                            func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetUUIDFunc:                            func() (string, nvml.Return) { return fmt.Sprintf("GPU-%d", idx), nvml.SUCCESS },
		GetPowerUsageFunc:                      func() (uint32, nvml.Return) { return 612345, ret("power") },
		GetEnforcedPowerLimitFunc:              func() (uint32, nvml.Return) { return m.limitMW, nvml.SUCCESS },
		GetPowerManagementLimitFunc:            func() (uint32, nvml.Return) { return m.limitMW, nvml.SUCCESS },
		GetPowerManagementLimitConstraintsFunc: func() (uint32, uint32, nvml.Return) { return 200000, 700000, nvml.SUCCESS },
		GetPowerManagementDefaultLimitFunc:     func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc:          func() (uint64, nvml.Return) { return 123456789, ret("energy") },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 2619, nvml.SUCCESS
		},
		GetTemperatureFunc:      func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 63, nvml.SUCCESS },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 97, Memory: 41}, nvml.SUCCESS },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) { // as a 580 driver answers
			return nvml.Memory_v2{Total: 80 << 30, Reserved: 615 << 20, Used: 40 << 30, Free: 40<<30 - 615<<20}, ret("memory v2")
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) { // v1 counts the reserved memory as used
			return nvml.Memory{Total: 80 << 30, Used: 40<<30 + 615<<20, Free: 40<<30 - 615<<20}, ret("memory")
		},
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			return 0, ret("events")
		},
		GetCurrentClocksThrottleReasonsFunc: func() (uint64, nvml.Return) { return ThrottleSWPowerCap, nvml.SUCCESS },
		GetPerformanceStateFunc:             func() (nvml.Pstates, nvml.Return) { return nvml.PSTATE_0, nvml.SUCCESS },
		SetPowerManagementLimitFunc: func(mw uint32) nvml.Return {
			if m.deny {
				return nvml.ERROR_NO_PERMISSION
			}
			*m.sets = append(*m.sets, fmt.Sprintf("%d:%d", idx, mw/1000))
			m.limitMW = mw
			return nvml.SUCCESS
		},
	}
}

// mockLib is go-nvml's mock Interface over gpus.
func mockLib(gpus []*mockGPU, initRet nvml.Return) *mock.Interface {
	devs := make([]nvml.Device, len(gpus))
	for i, g := range gpus {
		devs[i] = g.device(i)
	}
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return initRet },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i >= len(devs) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], nvml.SUCCESS
		},
	}
}

func TestNVMLOpen(t *testing.T) {
	var sets []string
	cases := []struct {
		name    string
		gpus    []*mockGPU
		init    nvml.Return
		note    string
		hasGPUs bool
	}{
		{"two GPUs", []*mockGPU{{limitMW: 700000, sets: &sets}, {limitMW: 700000, sets: &sets}}, nvml.SUCCESS, "2 GPU(s), NVIDIA H100", true},
		{"no library", nil, nvml.ERROR_LIBRARY_NOT_FOUND, "found no GPU: libnvidia-ml.so.1 not found", false},
		{"no driver", nil, nvml.ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded", false},
		{"no devices", nil, nvml.SUCCESS, "0 devices", false},
	}
	for _, c := range cases {
		g, note := openNVMLWith(mockLib(c.gpus, c.init))
		if (g != nil) != c.hasGPUs || !strings.Contains(note, c.note) {
			t.Errorf("%s: %v %q", c.name, g, note)
		}
		if g != nil {
			if g.Kind() != "nvml" || g.Count() != 2 || g.Close() != nil {
				t.Errorf("%s: kind %s count %d", c.name, g.Kind(), g.Count())
			}
		}
	}
}

func TestNVMLReadings(t *testing.T) {
	var sets []string
	g, _ := openNVMLWith(mockLib([]*mockGPU{{limitMW: 650000, sets: &sets, refuse: map[string]bool{"events": true}}}, nvml.SUCCESS))
	r, err := g.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	want := GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-0", PowerW: 612.345, PowerLimitW: 650, PowerMinW: 200, PowerMaxW: 700, PowerDefaultW: 700,
		EnergyJ: 123456.789, HasEnergy: true, SMClockMHz: 1980, MemClockMHz: 2619, TempC: 63, UtilGPU: 97, UtilMem: 41,
		MemUsed: 40 << 30, MemReserved: 615 << 20, MemTotal: 80 << 30, Throttle: ThrottleSWPowerCap, PState: 0}
	if fmt.Sprint(r.ThrottleNames) != "[sw_power_cap]" || len(r.Errors) != 0 {
		t.Errorf("throttle %v errors %v (the older call answers when clock events are refused)", r.ThrottleNames, r.Errors)
	}
	r.ThrottleNames = nil
	if fmt.Sprintf("%+v", r) != fmt.Sprintf("%+v", want) {
		t.Errorf("reading\n %+v\nwant\n %+v", r, want)
	}
	// Refused readings are listed, the rest still read.
	g2, _ := openNVMLWith(mockLib([]*mockGPU{{limitMW: 650000, sets: &sets, refuse: map[string]bool{"energy": true, "power": true}}}, nvml.SUCCESS))
	r2, err := g2.Read(0)
	if err != nil || r2.HasEnergy || r2.PowerW != 0 || len(r2.Errors) != 2 || r2.TempC != 63 || !strings.Contains(r2.Errors[0], "Not Supported") {
		t.Errorf("partial reading %+v, %v", r2, err)
	}
	// A driver without the v2 memory call: v1's figures, reserved memory unknown.
	g3, _ := openNVMLWith(mockLib([]*mockGPU{{limitMW: 650000, sets: &sets, refuse: map[string]bool{"memory v2": true}}}, nvml.SUCCESS))
	if r3, _ := g3.Read(0); r3.MemUsed != 40<<30+615<<20 || r3.MemReserved != 0 || r3.MemTotal != 80<<30 || len(r3.Errors) != 0 {
		t.Errorf("v1 memory reading: used %d reserved %d total %d, errors %v", r3.MemUsed, r3.MemReserved, r3.MemTotal, r3.Errors)
	}
	if _, err := g.Read(3); err == nil {
		t.Error("Read(3): no error")
	}
	// Through the Sampler, and summarised.
	s := NewSampler(g, "mock")
	p := Summarize([]Reading{s.Read(0), s.Read(1e9)}, "gpu")
	if p.Source != SourceNVML || p.Device != "gpu" || p.MeanW != 612.345 || p.LimitW != 650 {
		t.Errorf("summary %+v", p)
	}
}

func TestNVMLSetRestoreOrder(t *testing.T) {
	var sets []string
	g, _ := openNVMLWith(mockLib([]*mockGPU{{limitMW: 700000, sets: &sets}, {limitMW: 600000, sets: &sets}}, nvml.SUCCESS))
	file := filepath.Join(t.TempDir(), PowerStateFile)
	p := NewPowerGuard(g, file)
	for _, w := range []float64{500, 400} {
		for i := range 2 {
			if err := p.Set(i, w); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sets, " "); got != "0:500 1:500 0:400 1:400 1:600 0:700" {
		t.Errorf("NVML calls %q", got)
	}
	for i, want := range []float64{700, 600} {
		if w, _ := g.PowerLimit(i); w != want {
			t.Errorf("GPU %d at %v W; want %v", i, w, want)
		}
	}
	// A crash between changes: the next start restores from the state file.
	sets = nil
	p = NewPowerGuard(g, file)
	p.Set(0, 300)
	p.crash()
	if lines, err := RestoreSaved(g, file); err != nil || len(lines) != 1 || sets[len(sets)-1] != "0:700" {
		t.Fatalf("RestoreSaved: %v %v, calls %v", lines, err, sets)
	}
	if w, _ := g.PowerLimit(0); w != 700 {
		t.Errorf("after RestoreSaved: %v W", w)
	}
}

func TestNVMLPermissionDenied(t *testing.T) {
	var sets []string
	g, _ := openNVMLWith(mockLib([]*mockGPU{{limitMW: 700000, sets: &sets, deny: true}}, nvml.SUCCESS))
	p := NewPowerGuard(g, filepath.Join(t.TempDir(), PowerStateFile))
	err := p.Set(0, 500)
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "root") {
		t.Errorf("Set: %v", err)
	}
	if w, _ := g.PowerLimit(0); w != 700 || len(sets) != 0 {
		t.Errorf("limit %v, sets %v: something changed", w, sets)
	}
	if err := p.Restore(); err != nil {
		t.Errorf("Restore after nothing changed: %v", err)
	}
}
