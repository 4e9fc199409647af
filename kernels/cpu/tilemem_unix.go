//go:build unix

package cpu

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of an x86-64 transparent huge page. allocTiles starts a copy of
// at least that size on a multiple of it, so that each whole 2 MiB of the copy can be
// one huge page: a mapping placed anywhere loses the partial huge page at each end,
// which for llama-1b's Q4_0 tiles left about 55 % of them in huge pages.
const hugePage = 2 << 20

// mappings records the copies allocTiles mapped (first byte → mapped length), so that
// freeTiles unmaps those and only those: a heap fallback must be left to the garbage
// collector.
var mappings sync.Map

// allocTiles returns n zeroed bytes for a tiled copy, mapped outside the Go heap: the
// copies are most of a model's resident memory, and on the heap they would raise the
// garbage collector's goal by their size, letting that much garbage (the scratch of
// finished requests) stay resident before a collection. The mapping asks for huge
// pages (where the system gives them on request) since the tiles are streamed whole
// every step. It falls back to the heap when the mapping fails.
func allocTiles(n int) []byte {
	if n == 0 {
		return nil
	}
	size := uintptr(n)
	if n >= hugePage {
		size += hugePage // room to start on a huge page boundary
	}
	p, err := unix.MmapPtr(-1, 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	start := uintptr(p)
	if size > uintptr(n) {
		// Unmap the head before the first boundary and the tail after the copy's pages.
		page := uintptr(unix.Getpagesize())
		aligned := (start + hugePage - 1) &^ (hugePage - 1)
		end := (aligned + uintptr(n) + page - 1) &^ (page - 1)
		if aligned > start {
			_ = unix.MunmapPtr(p, aligned-start)
		}
		if tail := start + size - end; tail > 0 {
			_ = unix.MunmapPtr(unsafe.Add(p, end-start), tail)
		}
		p, size = unsafe.Add(p, aligned-start), end-aligned
	}
	b := unsafe.Slice((*byte)(p), n)
	mappings.Store(p, size)
	adviseHugePages(b)
	return b
}

// freeTiles releases a copy made by allocTiles; b must not be used afterwards.
func freeTiles(b []byte) {
	if len(b) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if size, ok := mappings.LoadAndDelete(p); ok {
		_ = unix.MunmapPtr(p, size.(uintptr))
	}
}
