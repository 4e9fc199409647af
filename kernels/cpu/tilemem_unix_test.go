//go:build unix

package cpu

import (
	"testing"
	"unsafe"
)

// TestAllocTiles checks allocTiles' copies: n zeroed, writable bytes, starting on a
// huge page boundary from one huge page up, and unmapped (forgotten) by freeTiles;
// freeing a slice it did not map leaves it alone.
func TestAllocTiles(t *testing.T) {
	for _, n := range []int{1, 4096, hugePage - 1, hugePage, 3*hugePage + 5} {
		b := allocTiles(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("n=%d: len %d cap %d", n, len(b), cap(b))
		}
		p := unsafe.Pointer(unsafe.SliceData(b))
		if _, ok := mappings.Load(p); !ok {
			t.Fatalf("n=%d: not a mapping (the heap fallback)", n)
		}
		if a := uintptr(p) % hugePage; n >= hugePage && a != 0 {
			t.Fatalf("n=%d: starts %d bytes past a huge page boundary", n, a)
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("n=%d: byte %d is %d, want 0", n, i, b[i])
			}
			b[i] = byte(i)
		}
		if b[n-1] != byte(n-1) {
			t.Fatalf("n=%d: last byte not written", n)
		}
		freeTiles(b)
		if _, ok := mappings.Load(p); ok {
			t.Fatalf("n=%d: still recorded after freeTiles", n)
		}
	}
	heap := make([]byte, 64)
	freeTiles(heap) // not a mapping: must not be unmapped
	heap[63] = 1
}
