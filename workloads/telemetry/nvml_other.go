//go:build !(linux && cgo)

package telemetry

// openNVML reports that this build has no NVML: go-nvml needs linux and cgo.
func openNVML() (GPUs, string) {
	return nil, "NVML found no GPU: this build has no NVML (it needs linux and cgo)"
}
