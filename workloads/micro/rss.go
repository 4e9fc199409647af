//go:build unix

package micro

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// resetPeakRSS asks Linux to restart the peak-RSS count (VmHWM) from the current
// resident set; it reports whether the kernel accepted.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns the process's peak resident set in bytes: VmHWM from
// /proc/self/status, else getrusage's maximum; 0 when neither is available.
func peakRSS() int64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		return int64(ru.Maxrss) << 10 // KiB on Linux
	}
	return 0
}
