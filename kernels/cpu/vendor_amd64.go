//go:build amd64 && !purego

package cpu

import (
	"encoding/binary"
	"sync"
)

func cpuid0() (ebx, ecx, edx uint32)

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
