//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"sync"
)

func cpuid0() (ebx, ecx, edx uint32)

func cpuid1() (eax uint32)

// vendor returns the CPU's vendor string ("AuthenticAMD", "GenuineIntel", …): where
// the same instructions stream memory at different rates, the kernel choice follows it.
var vendor = sync.OnceValue(func() string {
	b, c, d := cpuid0()
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], b)
	binary.LittleEndian.PutUint32(v[4:], d)
	binary.LittleEndian.PutUint32(v[8:], c)
	return string(v[:])
})

// quarters reports whether the one-token kernels walk a worker's band in quarters (four
// long streams, hardware prefetch only) rather than adjacent rows with software prefetch:
// LLMBENCH_DECODE_ORDER where set, else AMD's choice (see EnvDecodeOrder). Measured on
// Zen 4 first, and on Zen 5 again (llama-1b tg64 -t 2, three alternated rounds, t/s:
// F16 22.8–24.8 in quarters against 16.5–17.3 adjacent, Q8_0 52.1–54.1 against
// 48.7–51.2, Q4_0 72.6–79.0 against 69.6–69.7).
func quarters() bool {
	if orderEnv != "" {
		return orderEnv == "quarters"
	}
	return vendor() == "AuthenticAMD"
}

// family returns the CPU's family number from CPUID leaf 1 (the base family, plus the
// extended family where the base is 15): 25 on AMD Zen 3 and Zen 4, 26 on Zen 5.
var family = sync.OnceValue(func() int {
	a := cpuid1()
	f := int(a>>8) & 0xF
	if f == 0xF {
		f += int(a>>20) & 0xFF
	}
	return f
})

// quarterPrefetch reports whether the one-token kernels that read a band in quarters
// (F16/BF16 rows, the four-tile x1m kernels) prefetch ahead of their four streams in
// software: on AMD Zen 5 (family 26) and later, where the hardware prefetcher alone
// leaves a core short of the memory's rate. Zen 4 read fastest without (see PFON in
// tile_amd64.s). Zen 5, llama-1b -t 2, with prefetch against without: runs alternated
// in one process (tg32) F16 1.10–1.24×, BF16 1.06×, Q4_0 1.04–1.10×, Q8_0 1.03–1.07×,
// Q4_K_M 1.05–1.17× (the spans are the host's slow and fast phases), the Q2_K, Q3_K
// and Q5_K kernels alone (twelve rounds, medians): Q5_K_M 1.18×, Q3_K_M 1.32×, Q2_K
// 1.49×; whole runs
// (scripts/bench-ab.sh, tg64, medians of 4–6 rounds) F16 1.18×, BF16 1.09×, Q4_0
// 1.13×, Q4_K_M 1.19×, Q8_0 0.98–1.00×.
func quarterPrefetch() bool {
	return quarters() && vendor() == "AuthenticAMD" && family() >= 26
}
