package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"llmbench/kernels"
)

// TestClaimsCoverEveryCall plans one- and two-token products (claimToks) on the
// quarters path as claimBands' bands over two threads and runs the bands in orders the
// pool can give: each on a worker of its own, one worker alone (its band, then every
// call of the other's from the back: a helper that never came), and the second band
// first. Every output must equal the one-thread product of its token alone, bit for bit
// (the outputs start as NaN, so a call or a token left out shows).
func TestClaimsCoverEveryCall(t *testing.T) {
	if tileX1m == nil {
		t.Skip("no x1m kernels at this level")
	}
	defer func(v bool) { x1Quarters = v }(x1Quarters)
	x1Quarters = true
	rng := rand.New(rand.NewPCG(31, 7))
	one := New(1)
	defer one.Close()
	c := New(2)
	defer c.Close()
	tested := 0
	for _, typ := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K} {
		if tileFmts[typ].x1m == nil {
			continue // one tile at a time at this level and order
		}
		tested++
		// Tiles: 64 (bands of 32), 17 (a tile left over), 17 with a partial last;
		// 4096 columns, so that RunWork would split even the smallest.
		for _, rows := range []int{1024, 272, 16*16 + 5} {
			w := randMatrix(rng, typ, rows, 4096)
			x := make([]float32, claimToks*w.Cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			want := make([]float32, claimToks*rows)
			for tok := range claimToks {
				one.MatMul(want[tok*rows:], w, x[tok*w.Cols:], 1)
			}
			for n := 1; n <= claimToks; n++ {
				for _, order := range [][]int{{0, 1}, {0}, {1, 0}, {1}} {
					got := make([]float32, n*rows)
					for i := range got {
						got[i] = float32(math.NaN())
					}
					c.claimNext = 0
					parts, _ := c.plan(got, w, x, n)
					if !c.job.claims || parts != 2 {
						t.Fatalf("%s %d rows, %d tokens: %d parts, claims %v; want two claimed bands", typ, rows, n, parts, c.job.claims)
					}
					for _, p := range order {
						c.step(p, p)
					}
					c.job = job{}
					if !slices.Equal(got, want[:n*rows]) {
						t.Fatalf("%s %d rows, %d tokens, bands run %v: outputs differ from the one-thread products of each token", typ, rows, n, order)
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no four-tile one-token kernel at this level and decode order (AVX2, adjacent)")
	}
}

// TestPartClaimEnds checks partClaim: the front and the back meet without a call
// claimed twice or left out.
func TestPartClaimEnds(t *testing.T) {
	var p partClaim
	p.reset(5)
	var got []int
	for _, front := range []bool{true, false, false, true, true, true} {
		got = append(got, p.claim(!front))
	}
	if want := []int{0, 4, 3, 1, 2, -1}; !slices.Equal(got, want) {
		t.Fatalf("claims %v, want %v", got, want)
	}
	if p.claim(true) != -1 || p.claim(false) != -1 {
		t.Fatal("a call claimed after all were")
	}
}
