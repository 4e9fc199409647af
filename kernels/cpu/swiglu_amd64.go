//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func swigluAVX512(n16 int, dst, gate, up *float32)

//go:noescape
func swigluAVX2(n8 int, dst, gate, up *float32)

// The AVX-512 swiglu runs where the CPU has AVX-512 F and LLMBENCH_CPU allows it, the
// AVX2 one where it has AVX2 (levelCap is set before any init runs).
func init() {
	switch {
	case allowed(capAVX512) && cpu.X86.HasAVX512F:
		swiglu = swigluAsm(16, swigluAVX512)
	case allowed(capAVX2) && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		swiglu = swigluAsm(8, swigluAVX2)
	}
}

// swigluAsm is swiglu over an assembly kernel k of g values at a time; the tail takes
// swigluGo.
func swigluAsm(g int, k func(n int, dst, gate, up *float32)) func(dst, gate, up []float32) {
	return func(dst, gate, up []float32) {
		n := len(gate) / g
		if n > 0 {
			_, _ = dst[len(gate)-1], up[len(gate)-1]
			k(n, &dst[0], &gate[0], &up[0])
		}
		swigluGo(dst[g*n:len(gate)], gate[g*n:], up[g*n:])
	}
}
