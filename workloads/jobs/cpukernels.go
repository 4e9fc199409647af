package jobs

import (
	"llmbench/kernels"
)

// Kernels lists, per weight type and phase (decode, prompt), the kernel the engine's
// default backend ("cpu") runs on this machine and the CPU features that chose it, for
// `llmbench sysinfo`. It is nil where the backend cannot say; the error is the
// backend's refusal to start (such as an unknown LLMBENCH_CPU value).
func Kernels() ([]kernels.KernelChoice, error) {
	be, err := kernels.Select("cpu", 1)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	if l, ok := be.(kernels.KernelLister); ok {
		return l.Kernels(), nil
	}
	return nil, nil
}
