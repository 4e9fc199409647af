// Package telemetry discovers the machine llmbench runs on: the CPU (model name, vector
// features, cores) and its measured memory read bandwidth, the ceiling that token
// generation on the CPU is read against.
package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
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
	// Vendor, Family and ModelNumber identify an x86 CPU where the model name does not
	// (a VM's "AMD EPYC"): /proc/cpuinfo's vendor_id, cpu family and model; "" and 0
	// elsewhere. Microarch names the core they mean where Microarch knows it.
	Vendor      string `json:"vendor,omitempty"`
	Family      int    `json:"family,omitempty"`
	ModelNumber int    `json:"model_number,omitempty"`
	Microarch   string `json:"microarch,omitempty"`
}

// Name is the model name followed, where known, by the vendor, family and model
// numbers and the core they mean: "AMD EPYC (AuthenticAMD family 26 model 2: Zen 5)".
func (c CPU) Name() string {
	if c.Vendor == "" || c.Family == 0 {
		return c.Model
	}
	id := fmt.Sprintf("%s family %d model %d", c.Vendor, c.Family, c.ModelNumber)
	if c.Microarch != "" {
		id += ": " + c.Microarch
	}
	return c.Model + " (" + id + ")"
}

// Microarch returns the core an x86 vendor, family and model number mean, for the
// server cores the kernels' choices were measured on and their neighbours; "" for the
// others. Family 25 (0x19) holds both Zen 3 and Zen 4, told apart by model ranges.
func Microarch(vendor string, family, model int) string {
	switch vendor {
	case "AuthenticAMD":
		switch {
		case family == 0x1A:
			return "Zen 5"
		case family == 0x19 && (model <= 0x0F || model >= 0x20 && model <= 0x2F || model >= 0x40 && model <= 0x5F):
			return "Zen 3"
		case family == 0x19 && (model >= 0x10 && model <= 0x1F || model >= 0x60 && model <= 0x7F || model >= 0xA0 && model <= 0xAF):
			return "Zen 4"
		}
	case "GenuineIntel":
		if family != 6 {
			return ""
		}
		switch model {
		case 0x55:
			return "Skylake-SP/Cascade Lake-SP"
		case 0x6A, 0x6C:
			return "Ice Lake-SP"
		case 0x8F:
			return "Sapphire Rapids"
		case 0xCF:
			return "Emerald Rapids"
		case 0xAD, 0xAE:
			return "Granite Rapids"
		}
	}
	return ""
}

// CPUInfo returns the description of this machine's CPU.
func CPUInfo() CPU {
	c := CPU{Arch: runtime.GOARCH, Logical: runtime.NumCPU(), Features: Features()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		c = parseCPUInfo(f, c)
	}
	if c.Model == "" {
		c.Model = runtime.GOARCH
	}
	return c
}

// parseCPUInfo fills in c, from the text of /proc/cpuinfo, the model name, the numbers
// of distinct cores and packages, and the first processor's x86 identification.
func parseCPUInfo(r io.Reader, c CPU) CPU {
	var model string
	seenModel := false
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
		case "vendor_id":
			if c.Vendor == "" {
				c.Vendor = v
			}
		case "cpu family":
			if n, err := strconv.Atoi(v); err == nil && c.Family == 0 {
				c.Family = n
			}
		case "model":
			if n, err := strconv.Atoi(v); err == nil && !seenModel {
				c.ModelNumber, seenModel = n, true
			}
		}
	}
	flush()
	c.Model, c.Physical, c.Sockets = model, len(cores), len(pkgs)
	if c.Family != 0 {
		c.Microarch = Microarch(c.Vendor, c.Family, c.ModelNumber)
	}
	return c
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
