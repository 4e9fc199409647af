//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func swigluAVX512(n16 int, dst, gate, up *float32)

// The AVX-512 swiglu runs where the CPU has AVX-512 F and LLMBENCH_CPU allows it
// (levelCap is set before any init runs).
func init() {
	if !allowed(capAVX512) || !cpu.X86.HasAVX512F {
		return
	}
	swiglu = func(dst, gate, up []float32) {
		n16 := len(gate) / 16
		if n16 > 0 {
			_, _ = dst[len(gate)-1], up[len(gate)-1]
			swigluAVX512(n16, &dst[0], &gate[0], &up[0])
		}
		swigluGo(dst[16*n16:len(gate)], gate[16*n16:], up[16*n16:])
	}
}
