//go:build linux && cgo

package telemetry

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openNVML loads libnvidia-ml at run time and lists its GPUs.
func openNVML() (GPUs, string) { return openNVMLWith(nvml.New()) }

// nvmlGPUs reads GPUs through an nvml.Interface (the real library or go-nvml's mock).
type nvmlGPUs struct {
	lib  nvml.Interface
	devs []nvml.Device
	name []string
	uuid []string
}

// openNVMLWith initialises lib and opens its devices; it returns nil and the reason
// when the library is missing, fails or has no GPU.
func openNVMLWith(lib nvml.Interface) (GPUs, string) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, "NVML found no GPU: libnvidia-ml.so.1 not found (no NVIDIA driver)"
		}
		return nil, "NVML found no GPU: init: " + nvmlErrorString(ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS || n == 0 {
		lib.Shutdown()
		if ret != nvml.SUCCESS {
			return nil, "NVML found no GPU: device count: " + nvmlErrorString(ret)
		}
		return nil, "NVML found no GPU (0 devices)"
	}
	g := &nvmlGPUs{lib: lib}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Sprintf("NVML: GPU %d: %s", i, nvmlErrorString(ret))
		}
		name, _ := d.GetName()
		uuid, _ := d.GetUUID()
		g.devs, g.name, g.uuid = append(g.devs, d), append(g.name, name), append(g.uuid, uuid)
	}
	return g, fmt.Sprintf("NVML: %d GPU(s), %s", n, g.name[0])
}

// nvmlErrorString names a return code without needing the library.
func nvmlErrorString(r nvml.Return) string {
	switch r {
	case nvml.ERROR_NO_PERMISSION:
		return "Insufficient Permissions"
	case nvml.ERROR_NOT_SUPPORTED:
		return "Not Supported"
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "NVML Shared Library Not Found"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded"
	}
	return fmt.Sprintf("NVML error %d", int32(r))
}

func (g *nvmlGPUs) Kind() string { return "nvml" }
func (g *nvmlGPUs) Count() int   { return len(g.devs) }

func (g *nvmlGPUs) dev(i int) (nvml.Device, error) {
	if i < 0 || i >= len(g.devs) {
		return nil, fmt.Errorf("nvml: no GPU %d", i)
	}
	return g.devs[i], nil
}

// Read implements GPUs: every reading NVML gives; the ones it refuses go to Errors.
func (g *nvmlGPUs) Read(i int) (GPU, error) {
	d, err := g.dev(i)
	if err != nil {
		return GPU{}, err
	}
	r := GPU{Index: i, Name: g.name[i], UUID: g.uuid[i], PState: -1}
	fail := func(what string, ret nvml.Return) bool {
		if ret == nvml.SUCCESS {
			return false
		}
		r.Errors = append(r.Errors, what+": "+nvmlErrorString(ret))
		return true
	}
	if mw, ret := d.GetPowerUsage(); !fail("power", ret) {
		r.PowerW = float64(mw) / 1000
	}
	if mw, ret := d.GetEnforcedPowerLimit(); !fail("power limit", ret) {
		r.PowerLimitW = float64(mw) / 1000
	}
	if lo, hi, ret := d.GetPowerManagementLimitConstraints(); !fail("power limit range", ret) {
		r.PowerMinW, r.PowerMaxW = float64(lo)/1000, float64(hi)/1000
	}
	if mw, ret := d.GetPowerManagementDefaultLimit(); !fail("default power limit", ret) {
		r.PowerDefaultW = float64(mw) / 1000
	}
	if mj, ret := d.GetTotalEnergyConsumption(); !fail("energy", ret) {
		r.EnergyJ, r.HasEnergy = float64(mj)/1000, true
	}
	if mhz, ret := d.GetClockInfo(nvml.CLOCK_SM); !fail("sm clock", ret) {
		r.SMClockMHz = int(mhz)
	}
	if mhz, ret := d.GetClockInfo(nvml.CLOCK_MEM); !fail("mem clock", ret) {
		r.MemClockMHz = int(mhz)
	}
	if c, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); !fail("temperature", ret) {
		r.TempC = int(c)
	}
	if u, ret := d.GetUtilizationRates(); !fail("utilization", ret) {
		r.UtilGPU, r.UtilMem = int(u.Gpu), int(u.Memory)
	}
	// Memory as nvidia-smi counts it: the v2 call leaves the driver's reserved memory
	// out of "used" (hundreds of MiB on an idle H200, where v1 reports them as used);
	// drivers before 510 only know v1.
	if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		r.MemUsed, r.MemReserved, r.MemTotal = m.Used, m.Reserved, m.Total
	} else if m, ret := d.GetMemoryInfo(); !fail("memory", ret) {
		r.MemUsed, r.MemTotal = m.Used, m.Total
	}
	mask, ret := d.GetCurrentClocksEventReasons()
	if ret != nvml.SUCCESS { // drivers before 535 only know the older name
		mask, ret = d.GetCurrentClocksThrottleReasons()
	}
	if !fail("throttle reasons", ret) {
		r.Throttle = mask
	}
	r.ThrottleNames = ThrottleReasons(r.Throttle)
	if p, ret := d.GetPerformanceState(); !fail("pstate", ret) && p != nvml.PSTATE_UNKNOWN {
		r.PState = int(p)
	}
	if len(r.Errors) == 11 { // nothing at all answered
		return r, fmt.Errorf("nvml: GPU %d: %s", i, r.Errors[0])
	}
	return r, nil
}

// PowerLimit implements GPUs.
func (g *nvmlGPUs) PowerLimit(i int) (float64, error) {
	d, err := g.dev(i)
	if err != nil {
		return 0, err
	}
	mw, ret := d.GetPowerManagementLimit()
	if ret != nvml.SUCCESS {
		return 0, fmt.Errorf("nvml: GPU %d: power limit: %s", i, nvmlErrorString(ret))
	}
	return float64(mw) / 1000, nil
}

// SetPowerLimit implements GPUs.
func (g *nvmlGPUs) SetPowerLimit(i int, watts float64) error {
	d, err := g.dev(i)
	if err != nil {
		return err
	}
	switch ret := d.SetPowerManagementLimit(uint32(watts*1000 + 0.5)); ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_NO_PERMISSION:
		return fmt.Errorf("nvml: GPU %d: %w", i, ErrPermission)
	default:
		return fmt.Errorf("nvml: GPU %d: set power limit %.0f W: %s", i, watts, nvmlErrorString(ret))
	}
}

// Close implements GPUs.
func (g *nvmlGPUs) Close() error {
	if ret := g.lib.Shutdown(); ret != nvml.SUCCESS {
		return errors.New("nvml: shutdown: " + nvmlErrorString(ret))
	}
	return nil
}
