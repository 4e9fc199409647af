// Package telemetry discovers the machine llmbench runs on: the CPU (model name, vector
// features, cores) and its measured memory read bandwidth, the ceiling that token
// generation on the CPU is read against.
package telemetry

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// CPU describes the processor.
type CPU struct {
	Model    string   `json:"model"`    // "AMD EPYC 7B13" (from /proc/cpuinfo; GOARCH when unknown)
	Arch     string   `json:"arch"`     // GOARCH
	Features []string `json:"features"` // SIMD and related features the kernels may use
	Logical  int      `json:"logical"`  // logical CPUs the process may run on
	Physical int      `json:"physical"` // physical cores (0 when unknown)
	Sockets  int      `json:"sockets"`  // packages (0 when unknown)
}

// CPUInfo returns the description of this machine's CPU.
func CPUInfo() CPU {
	c := CPU{Arch: runtime.GOARCH, Logical: runtime.NumCPU(), Features: Features()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		c.Model, c.Physical, c.Sockets = parseCPUInfo(f)
	}
	if c.Model == "" {
		c.Model = runtime.GOARCH
	}
	return c
}

// parseCPUInfo reads the model name and the numbers of distinct cores and packages
// from the text of /proc/cpuinfo.
func parseCPUInfo(r io.Reader) (model string, physical, sockets int) {
	type core struct{ pkg, id string }
	cores := map[core]bool{}
	pkgs := map[string]bool{}
	var pkg, id string
	flush := func() {
		if id != "" {
			cores[core{pkg, id}] = true
		}
		if pkg != "" {
			pkgs[pkg] = true
		}
		pkg, id = "", ""
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name", "Model", "cpu model", "Processor":
			if model == "" && v != "" {
				model = v
			}
		case "physical id":
			pkg = v
		case "core id":
			id = v
		}
	}
	flush()
	return model, len(cores), len(pkgs)
}

// Features lists the CPU features that matter to inference kernels, by their
// /proc/cpuinfo names.
func Features() []string {
	var out []string
	add := func(has bool, name string) {
		if has {
			out = append(out, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		x := cpu.X86
		add(x.HasSSE3, "sse3")
		add(x.HasSSSE3, "ssse3")
		add(x.HasSSE41, "sse4_1")
		add(x.HasSSE42, "sse4_2")
		add(x.HasPOPCNT, "popcnt")
		add(x.HasAVX, "avx")
		add(x.HasF16C, "f16c")
		add(x.HasFMA, "fma")
		add(x.HasBMI2, "bmi2")
		add(x.HasAVX2, "avx2")
		add(x.HasAVXVNNI, "avx_vnni")
		add(x.HasAVX512F, "avx512f")
		add(x.HasAVX512BW, "avx512bw")
		add(x.HasAVX512VL, "avx512vl")
		add(x.HasAVX512VNNI, "avx512_vnni")
		add(x.HasAVX512BF16, "avx512_bf16")
		add(x.HasAMXTile, "amx_tile")
		add(x.HasAMXInt8, "amx_int8")
		add(x.HasAMXBF16, "amx_bf16")
	case "arm64":
		a := cpu.ARM64
		add(a.HasASIMD, "asimd")
		add(a.HasFPHP, "fphp")
		add(a.HasASIMDHP, "asimdhp")
		add(a.HasASIMDDP, "asimddp")
		add(a.HasI8MM, "i8mm")
		add(a.HasSVE, "sve")
		add(a.HasSVE2, "sve2")
	}
	return out
}
