package cpu

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMatMulAMX times 512-token products (a prompt's) of llama-1b-shaped matrices
// of each type with an AMX kernel, with the AMX path off (VNNI) and on, alternating in
// one process; the reported rate is weight bytes times tokens, tok/s the tokens per
// second and cpu-ms/op the process's CPU time per product (steadier than wall time
// while other processes share the cores).
func BenchmarkMatMulAMX(b *testing.B) {
	const n = 512
	modes := amxModes()
	for _, typ := range amxTypes {
		for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}} {
			w := benchMatrix(typ, sh[0], sh[1])
			x := benchActs(n * sh[1])
			dst := make([]float32, n*sh[0])
			for _, on := range modes {
				b.Run(fmt.Sprintf("%s/%dx%d/amx=%v", typ, sh[0], sh[1], on), func(b *testing.B) {
					setAMX(b, on)
					c := New(2)
					defer c.Close()
					c.MatMul(dst, w, x, n) // tile the weights
					b.SetBytes(int64(len(w.Data)) * n)
					cpu0 := cpuTime()
					for b.Loop() {
						c.MatMul(dst, w, x, n)
					}
					b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "tok/s")
					b.ReportMetric((cpuTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
				})
			}
		}
	}
}
