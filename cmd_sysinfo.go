package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"llmbench/engine/gguf"
	"llmbench/kernels"
	"llmbench/workloads"
	"llmbench/workloads/jobs"
	"llmbench/workloads/report"
	"llmbench/workloads/telemetry"
)

// sysinfo is what `llmbench sysinfo -o json` prints.
type sysinfo struct {
	CPU       telemetry.CPU       `json:"cpu"`
	Bandwidth telemetry.Bandwidth `json:"read_bandwidth"`
	// Kernels are the CPU backend's kernels per weight type and phase, and why.
	Kernels []kernels.KernelChoice `json:"kernels"`
	Model   *sysinfoModel          `json:"model,omitempty"`
}

// sysinfoModel is the tg ceiling of one model on this machine.
type sysinfoModel struct {
	File                string  `json:"file"`
	WeightBytesPerToken uint64  `json:"weight_bytes_per_token"`
	CeilingTS           float64 `json:"tg_ceiling_ts"`
}

func runSysinfo(ctx context.Context, args []string) error {
	fs := newFlags("sysinfo", "[-t N] [--bw-size 1GiB] [--bw-probes 5] [-m FILE | --shape S --type T] [-o text|json]", nil)
	threads := fs.Int("t", 0, "threads reading the buffer (0 = all cores)")
	size := fs.String("bw-size", "1GiB", "buffer `size` of each bandwidth probe")
	probes := fs.Int("bw-probes", 5, "bandwidth probes (the median is reported)")
	model := fs.String("m", "", "GGUF model `file`: also print its tg ceiling")
	shape := fs.String("shape", "", "synthetic model `shape` for the tg ceiling (with --type)")
	typ := fs.String("type", "", "synthetic model `type` for the tg ceiling")
	cacheDir := fs.String("cache-dir", "", "synthetic model cache `dir`")
	out := fs.String("o", "text", "output `format`: text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("sysinfo", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	n, err := workloads.ParseBytes(*size)
	if err != nil {
		return usageErr("sysinfo", fmt.Errorf("--bw-size: %w", err))
	}
	if *probes < 1 {
		return usageErr("sysinfo", fmt.Errorf("--bw-probes: %d (minimum 1)", *probes))
	}
	if *threads < 0 {
		return usageErr("sysinfo", fmt.Errorf("-t: %d is negative", *threads))
	}
	if *out != "text" && *out != "json" {
		return usageErr("sysinfo", fmt.Errorf("-o: %q is not text or json", *out))
	}
	if (*shape == "") != (*typ == "") {
		return usageErr("sysinfo", errors.New("--shape and --type go together"))
	}
	info := sysinfo{CPU: telemetry.CPUInfo()}
	if info.Kernels, err = jobs.Kernels(); err != nil {
		return err
	}
	path := *model
	if *shape != "" {
		if path, err = jobs.ModelFile(ctx, workloads.BenchModel{Shape: *shape, Type: *typ}, *cacheDir, nil); err != nil {
			return err
		}
	}
	if path != "" {
		f, err := gguf.Open(path)
		if err != nil {
			return err
		}
		info.Model = &sysinfoModel{File: path, WeightBytesPerToken: jobs.WeightBytesPerToken(f)}
		f.Close()
	}
	if info.Bandwidth, err = telemetry.MeasureReadBandwidth(ctx, n, *threads, *probes); err != nil {
		return err
	}
	if info.Model != nil && info.Model.WeightBytesPerToken > 0 {
		info.Model.CeilingTS = info.Bandwidth.Median / float64(info.Model.WeightBytesPerToken)
	}
	if *out == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	return sysinfoText(os.Stdout, info)
}

func sysinfoText(w io.Writer, s sysinfo) error {
	var b strings.Builder
	row := func(k, format string, a ...any) {
		if k != "" { // "" continues the row above
			k += ":"
		}
		fmt.Fprintf(&b, "%-15s %s\n", k, fmt.Sprintf(format, a...))
	}
	row("cpu", "%s", s.CPU.Name())
	row("arch", "%s", s.CPU.Arch)
	feats := strings.Join(s.CPU.Features, " ")
	if feats == "" {
		feats = "(none detected)"
	}
	row("features", "%s", feats)
	phys := "physical unknown"
	if s.CPU.Physical > 0 {
		phys = fmt.Sprintf("%d physical", s.CPU.Physical)
	}
	row("cores", "%d logical, %s", s.CPU.Logical, phys)
	bw := s.Bandwidth
	lo, hi := bw.Samples[0], bw.Samples[0]
	for _, v := range bw.Samples {
		lo, hi = min(lo, v), max(hi, v)
	}
	row("read bandwidth", "%.2f GB/s (median of %d probes summing %s with %d threads, the fastest reading pattern's; min %.2f, max %.2f)",
		bw.GBps(), len(bw.Samples), report.BytesIEC(uint64(bw.Bytes)), bw.Threads, lo/1e9, hi/1e9)
	var pats []string
	for _, p := range bw.Patterns {
		pats = append(pats, fmt.Sprintf("%s %.2f", p.Pattern, p.Median/1e9))
	}
	if len(pats) > 0 {
		row("", "by pattern (streams per thread; GB/s, medians): %s; fastest: %s", strings.Join(pats, ", "), bw.Best)
	}
	if hp := hugePageLine(bw); hp != "" {
		row("", "%s", hp)
	}
	tw, pw, kw := 0, 0, 0 // column widths: the longest type, phase and kernel names
	for _, k := range s.Kernels {
		tw, pw, kw = max(tw, len(k.Type.String())), max(pw, len(k.Phase)), max(kw, len(k.Kernel))
	}
	for i, k := range s.Kernels {
		key := ""
		if i == 0 {
			key = "kernels"
		}
		row(key, "%-*s %-*s %-*s %s; %s", tw, k.Type, pw, k.Phase, kw, k.Kernel, k.Detail, k.Why)
	}
	if m := s.Model; m != nil {
		row("model", "%s", m.File)
		row("weights/token", "%s (every tensor but token_embd)", report.BytesIEC(m.WeightBytesPerToken))
		row("tg ceiling", "%.2f t/s (read bandwidth ÷ weights per token)", m.CeilingTS)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hugePageLine says how much of the mapping that holds the probe's buffer sat in
// transparent huge pages and under which system setting, "" where neither is known.
func hugePageLine(bw telemetry.Bandwidth) string {
	mode := ""
	if bw.HugePages != "" {
		mode = fmt.Sprintf(" (transparent huge pages: %s)", bw.HugePages)
	}
	if bw.HugePageBytes < 0 {
		if mode == "" {
			return ""
		}
		return "buffer in huge pages: unknown" + mode
	}
	return fmt.Sprintf("buffer in huge pages: %s of the %s mapping that holds it%s", report.BytesIEC(uint64(bw.HugePageBytes)), report.BytesIEC(uint64(bw.MappedBytes)), mode)
}
