package cpu

import (
	"bytes"
	"fmt"
	"testing"

	"llmbench/kernels"
)

// TestRegroupMatchesGo checks the assembly regrouping of Q8_0 and Q8_K activations
// (regroupQ8_0, regroupQ8_K) against prepActsOver's Go loop byte for byte: blocks of
// 32 (and 16) quants with the formats' k offsets, groups of four and sixteen tokens,
// every count of real tokens, with and without clearing the padding, over activations
// with ties, zero blocks, huge, tiny and non-finite values.
func TestRegroupMatchesGo(t *testing.T) {
	if regroupQ8_0 == nil || regroupQ8_K == nil {
		t.Skip("no assembly regrouping on this CPU or build (" + EnvLevel + ")")
	}
	const cols = 512
	fast0, fastK := regroupQ8_0, regroupQ8_K
	defer func() { regroupQ8_0, regroupQ8_K = fast0, fastK }()
	for _, c := range []struct {
		vt kernels.DType
		bs int
		k  int32
	}{{kernels.Q8_0, 32, 8}, {kernels.Q8_0, 32, 128}, {kernels.Q8_K, 32, 0}, {kernels.Q8_K, 16, 32}, {kernels.Q8_K, 16, 4}} {
		vt := kernels.TraitsOf(c.vt)
		xRow := cols / vt.BlockSize * vt.BlockBytes
		for seed := range uint64(6) {
			for _, gsz := range []int{gemmToks, amxToks} {
				n := 2*gsz - 1 - int(seed%3)
				xq := make([]byte, n*xRow)
				x := quantInput(seed, n*cols, seed%2 == 1)
				for r := range n {
					fromFloat(c.vt, vt)(x[r*cols:(r+1)*cols], xq[r*xRow:(r+1)*xRow])
				}
				for g := range (n + gsz - 1) / gsz {
					for _, pad := range []bool{false, true} {
						what := fmt.Sprintf("%s blocks of %d, k %d, seed %d, group %d of %d, %d tokens, pad %v", c.vt, c.bs, c.k, seed, g, gsz, n, pad)
						size := cols / c.bs * gsz * (c.bs + 12)
						want, got := bytes.Repeat([]byte{0xA5}, size), bytes.Repeat([]byte{0xA5}, size)
						regroupQ8_0, regroupQ8_K = nil, nil
						prepActsOver(want, xq, xRow, n, g, gsz, c.vt, c.bs, cols, c.k, pad)
						regroupQ8_0, regroupQ8_K = fast0, fastK
						prepActsOver(got, xq, xRow, n, g, gsz, c.vt, c.bs, cols, c.k, pad)
						if !bytes.Equal(got, want) {
							i := 0
							for got[i] == want[i] {
								i++
							}
							t.Fatalf("%s: byte %d is %#x, want %#x", what, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
