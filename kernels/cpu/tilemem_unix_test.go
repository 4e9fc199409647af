//go:build unix

package cpu

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapped reports whether the page under p is mapped (madvise fails with ENOMEM on an
// unmapped range).
func mapped(p unsafe.Pointer) bool {
	err := unix.Madvise(unsafe.Slice((*byte)(p), 1), unix.MADV_NORMAL)
	return !errors.Is(err, unix.ENOMEM)
}

// TestArenas checks the arenas behind allocTiles: copies of n zeroed, writable bytes,
// cut one after another (each on a cache line) from an arena that starts on a huge
// page boundary; a copy of half an arena or more in an arena of its own; a freed
// copy's pages given back (zeros) while others live, and each arena unmapped with its
// last copy; freeing a slice not cut from an arena leaves it alone.
func TestArenas(t *testing.T) {
	var a arenas
	fill := func(b []byte) {
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("%d bytes: byte %d is %d, want 0", len(b), i, b[i])
			}
			b[i] = byte(i | 1)
		}
	}
	sizes := []int{1, 4096, 100, hugePage - 1, 3*hugePage + 5}
	var bs [][]byte
	for _, n := range sizes {
		b := a.alloc(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("n=%d: len %d cap %d", n, len(b), cap(b))
		}
		fill(b)
		bs = append(bs, b)
	}
	first := a.owner[unsafe.Pointer(&bs[0][0])]
	if first == nil {
		t.Fatal("the first copy is not from an arena (the heap fallback)")
	}
	if uintptr(first.base)%hugePage != 0 || first.size != arenaBytes || first.live != len(sizes) {
		t.Fatalf("arena at %#x of %d bytes with %d copies; want a huge page boundary, %d, %d", first.base, first.size, first.live, arenaBytes, len(sizes))
	}
	off := uintptr(0)
	for i, b := range bs {
		if got := uintptr(unsafe.Pointer(&b[0])) - uintptr(first.base); got != off {
			t.Fatalf("copy %d (%d bytes) at offset %d, want %d", i, len(b), got, off)
		}
		off += (uintptr(len(b)) + 63) &^ 63
	}
	big := a.alloc(arenaBytes / 2)
	own := a.owner[unsafe.Pointer(&big[0])]
	if own == nil || own == first || own.size != arenaBytes/2 || uintptr(own.base)%hugePage != 0 || len(a.open) != 1 {
		t.Fatalf("a copy of half an arena did not get an arena of its own")
	}
	fill(big[:hugePage])
	a.free(big)
	if mapped(own.base) {
		t.Fatal("the big copy's arena is still mapped after its free")
	}
	// Free the 3·2 MiB copy while the others live: its pages read as zeros again.
	long := bs[4]
	a.free(long)
	if long[4096] != 0 || long[len(long)-4096] != 0 {
		t.Fatal("a freed copy's whole pages were not given back")
	}
	if !mapped(first.base) || first.live != len(sizes)-1 {
		t.Fatal("the arena did not outlive a copy that was not its last")
	}
	for _, b := range bs[:4] {
		a.free(b)
	}
	if mapped(first.base) || len(a.open) != 0 || len(a.owner) != 0 {
		t.Fatal("the arena outlived its last copy")
	}
	// First fit: a copy that does not fit in the first arena opens a second; a
	// smaller one after it still goes into the first one's room.
	part := arenaBytes * 15 / 32 // two fit in an arena, three do not
	f1, f2, f3 := a.alloc(part), a.alloc(part), a.alloc(part)
	f4 := a.alloc(100)
	own4 := func(b []byte) *tileArena { return a.owner[unsafe.Pointer(&b[0])] }
	if own4(f1) != own4(f2) || own4(f3) == own4(f1) || own4(f4) != own4(f1) || len(a.open) != 2 {
		t.Fatalf("first fit: arenas %p %p %p %p, %d open; want the 1st, 2nd and 4th copies in one", own4(f1), own4(f2), own4(f3), own4(f4), len(a.open))
	}
	for _, b := range [][]byte{f1, f2, f3, f4} {
		a.free(b)
	}
	if len(a.open) != 0 {
		t.Fatalf("%d arenas left open after their copies were freed", len(a.open))
	}
	heap := make([]byte, 64)
	a.free(heap) // not from an arena: must not be unmapped
	heap[63] = 1
	if b := allocTiles(10); a.owner[unsafe.Pointer(&b[0])] != nil || tileMem.owner[unsafe.Pointer(&b[0])] == nil {
		t.Fatal("allocTiles does not cut from the process's arenas")
	} else {
		freeTiles(b)
	}
}
