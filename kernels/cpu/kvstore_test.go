package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// TestStoreKVMatchesReference checks the backend's cache writes against the reference
// conversion value for value, for every cache type, at offsets and lengths that leave
// vector tails, over values that round, overflow, underflow to subnormals and NaN.
func TestStoreKVMatchesReference(t *testing.T) {
	c := New(1)
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []kernels.DType{kernels.F16, kernels.F32, kernels.Q8_0} {
		for _, n := range []int{32, 64, 96, 160} {
			src := make([]float32, n)
			for i := range src {
				switch i % 9 {
				case 0:
					src[i] = float32(rng.NormFloat64() * 1e5) // beyond F16's range
				case 1:
					src[i] = float32(rng.NormFloat64() * 1e-6) // F16 subnormals
				case 2:
					src[i] = float32(math.NaN())
				default:
					src[i] = float32(rng.NormFloat64())
				}
			}
			if typ == kernels.Q8_0 { // a quantized block with a NaN is undefined: keep values finite
				for i := range src {
					if src[i] != src[i] {
						src[i] = 1
					}
				}
			}
			const off = 64
			got, want := newKVView(typ, off+n), newKVView(typ, off+n)
			c.StoreKV(&got, off, src)
			kernels.StoreKV(&want, off, src)
			switch typ {
			case kernels.F16:
				for i := range got.F16 {
					if got.F16[i] != want.F16[i] {
						t.Fatalf("F16, %d values: element %d (%g) stored as %#04x, reference %#04x", n, i-off, src[max(i-off, 0)], got.F16[i], want.F16[i])
					}
				}
			case kernels.F32:
				for i := range got.F32 {
					if math.Float32bits(got.F32[i]) != math.Float32bits(want.F32[i]) {
						t.Fatalf("F32, %d values: element %d differs", n, i-off)
					}
				}
			default:
				if string(got.Q8) != string(want.Q8) {
					t.Fatalf("Q8_0, %d values: blocks differ from the reference", n)
				}
			}
		}
	}
}

func newKVView(typ kernels.DType, n int) kernels.KVView {
	switch typ {
	case kernels.F16:
		return kernels.KVView{Type: typ, F16: make([]uint16, n)}
	case kernels.Q8_0:
		return kernels.KVView{Type: typ, Q8: make([]byte, n/32*34)}
	}
	return kernels.KVView{Type: typ, F32: make([]float32, n)}
}
