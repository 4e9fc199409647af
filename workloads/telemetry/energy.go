package telemetry

import (
	"fmt"
	"strconv"
	"strings"
)

// Energy devices: which device's energy a run's power, energy and tokens-per-joule
// figures come from. A GPU is "gpu" (every GPU, summed) or "gpu:N".
const (
	// EnergyCPU is the CPU packages' energy (RAPL): the in-process engine's device.
	EnergyCPU = "cpu"
	// EnergyGPUs is every GPU's energy, summed.
	EnergyGPUs = "gpu"
	// EnergyNone attributes no energy to the run (an external server whose device
	// the user did not name).
	EnergyNone = "none"
)

// Sources of power readings: whether they are real and how they were read.
const (
	SourceRAPL = "rapl" // the CPU packages' RAPL counters
	SourceNVML = "nvml" // NVIDIA's management library
	SourceFake = "fake" // the scripted Fake device: not real readings
)

// ParseEnergyDevice checks an energy device name and returns it in canonical form:
// "cpu", "gpu" (every GPU), "gpu:N" or "none"; the empty string stays empty (the
// caller's default).
func ParseEnergyDevice(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", EnergyCPU, EnergyGPUs, EnergyNone:
		return v, nil
	}
	if n, ok := strings.CutPrefix(v, "gpu:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 {
			return "gpu:" + strconv.Itoa(i), nil
		}
	}
	return "", fmt.Errorf("energy device %q: want cpu, gpu, gpu:N (gpu:0, …) or none", s)
}

// energyGPU returns the GPU index a "gpu:N" device names, -1 for "gpu" (all), and
// whether dev names GPUs at all.
func energyGPU(dev string) (int, bool) {
	if dev == EnergyGPUs {
		return -1, true
	}
	if n, ok := strings.CutPrefix(dev, "gpu:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 {
			return i, true
		}
	}
	return 0, false
}

// DeviceLabel names an energy device for people: "CPU package (RAPL)", "GPU 0",
// "GPUs", "none".
func DeviceLabel(dev string) string {
	if i, ok := energyGPU(dev); ok {
		if i < 0 {
			return "GPUs"
		}
		return fmt.Sprintf("GPU %d", i)
	}
	switch dev {
	case EnergyCPU:
		return "CPU package"
	case "", EnergyNone:
		return "none"
	}
	return dev
}

// SourceLabel says whether readings of source are real: "real readings (RAPL)",
// "real readings (NVML)", "FAKE readings (scripted device)".
func SourceLabel(source string) string {
	switch source {
	case SourceFake:
		return "FAKE readings (scripted device, not real)"
	case SourceRAPL:
		return "real readings (RAPL)"
	case SourceNVML:
		return "real readings (NVML)"
	case "":
		return "no readings"
	}
	return source + " readings"
}
