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
// LLMBENCH_DECODE_ORDER where set, else AMD's choice (see EnvDecodeOrder).
func quarters() bool {
	if orderEnv != "" {
		return orderEnv == "quarters"
	}
	return vendor() == "AuthenticAMD"
}
