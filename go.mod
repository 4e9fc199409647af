module llmbench

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/NVIDIA/go-nvml v0.13.4-0
	github.com/dlclark/regexp2 v1.12.0
	golang.org/x/sys v0.49.0
)
