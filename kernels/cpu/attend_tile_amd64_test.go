//go:build amd64 && !purego

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpSum16MatchesExpSum8 checks that the AVX-512 tile exponential gives the
// eight-lane kernel's values and float64 sum bit for bit (the same order of
// additions, so a CPU's attention results do not depend on which of the two runs),
// for every length up to four groups of sixteen and past, and that a last partial
// group writes nothing past the slice.
func TestExpSum16MatchesExpSum8(t *testing.T) {
	if !attnScores16 {
		t.Skip("no AVX-512 attention kernels at this level")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	x8, x16 := expSumsOf(expSumx8), expSumsOf(expSumx16)
	for n := range 70 {
		// Scores from −80 to 10 (exponentials over 2^-115…2^14, whose float64 sum
		// depends on the order of the additions), a few far below: exponentials of 0.
		orig := make([]float32, n+16)
		for i := range orig {
			orig[i] = float32(rng.Float64()*90 - 80)
		}
		for i := range n / 7 {
			orig[7*i] = -200
		}
		a, b := append([]float32(nil), orig...), append([]float32(nil), orig...)
		sa, sb := x8(a[:n], 0.5), x16(b[:n], 0.5)
		if math.Float64bits(sa) != math.Float64bits(sb) {
			t.Fatalf("n=%d: sum %v with sixteen lanes, %v with eight", n, sb, sa)
		}
		sameBits(t, "exp16", 0, n, b, a)
	}
}
